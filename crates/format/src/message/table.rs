//! Checked access to the root table of a message body: the shared first step of every view.
//!
//! Runs after the FlatBuffers verifier, so every read here is expected to succeed; they are
//! checked anyway (an error, never a panic), which keeps views memory-safe on their own.

use super::MessageError;

/// Reads a little-endian u16 at `pos`, if in bounds.
#[inline]
pub(crate) fn u16_at(bytes: &[u8], pos: usize) -> Option<u16> {
    let b = bytes.get(pos..pos.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

/// Reads a little-endian u32 at `pos`, if in bounds.
#[inline]
pub(crate) fn u32_at(bytes: &[u8], pos: usize) -> Option<u32> {
    let b: [u8; 4] = bytes.get(pos..pos.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// Reads a little-endian u64 at `pos`, if in bounds.
#[inline]
pub(crate) fn u64_at(bytes: &[u8], pos: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(pos..pos.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// The root table of a FlatBuffers body: where the table and its vtable are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RootTable<'a> {
    body: &'a [u8],
    table: usize,
    vtable: usize,
    vtable_len: usize,
    name: &'static str,
}

/// A vector field: position of its first element in the body, and its element count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct VectorPos {
    pub start: usize,
    pub len: usize,
}

impl<'a> RootTable<'a> {
    /// Opens the root table and refuses vtables that declare more than `known` fields (Dolt's
    /// forward-compatibility guard, `NumFields > known`).
    pub(crate) fn open(
        body: &'a [u8],
        name: &'static str,
        known: usize,
    ) -> Result<RootTable<'a>, MessageError> {
        let bad = |detail: &str| MessageError::FlatBuffers {
            table: name,
            detail: detail.to_string(),
        };
        let table = u32_at(body, 0).ok_or_else(|| bad("root offset out of bounds"))? as usize;
        let soff = u32_at(body, table).ok_or_else(|| bad("table out of bounds"))? as i32;
        let vtable = (table as i64 - i64::from(soff)) as usize;
        let vtable_len =
            usize::from(u16_at(body, vtable).ok_or_else(|| bad("vtable out of bounds"))?);
        if vtable_len < 4 || vtable_len % 2 != 0 || body.len() < vtable.saturating_add(vtable_len) {
            return Err(bad("malformed vtable"));
        }
        let declared = vtable_len / 2 - 2;
        if declared > known {
            return Err(MessageError::UnknownFields {
                table: name,
                declared,
                known,
            });
        }
        Ok(RootTable {
            body,
            table,
            vtable,
            vtable_len,
            name,
        })
    }

    /// Body position of field `id`, or `None` if absent.
    #[inline]
    fn field(&self, id: usize) -> Option<usize> {
        let entry = 4 + 2 * id;
        if entry + 2 > self.vtable_len {
            return None;
        }
        match u16_at(self.body, self.vtable + entry)? {
            0 => None,
            rel => Some(self.table + usize::from(rel)),
        }
    }

    fn out_of_bounds(&self, field: &'static str) -> MessageError {
        MessageError::FlatBuffers {
            table: self.name,
            detail: format!("field {field} out of bounds"),
        }
    }

    /// A u8 scalar (0 when absent).
    pub(crate) fn u8(&self, id: usize, field: &'static str) -> Result<u8, MessageError> {
        match self.field(id) {
            None => Ok(0),
            Some(p) => self
                .body
                .get(p)
                .copied()
                .ok_or_else(|| self.out_of_bounds(field)),
        }
    }

    /// A u64 scalar (0 when absent).
    pub(crate) fn u64(&self, id: usize, field: &'static str) -> Result<u64, MessageError> {
        match self.field(id) {
            None => Ok(0),
            Some(p) => u64_at(self.body, p).ok_or_else(|| self.out_of_bounds(field)),
        }
    }

    /// A vector of `elem`-byte elements, or `None` when absent.
    pub(crate) fn vector(
        &self,
        id: usize,
        elem: usize,
        field: &'static str,
    ) -> Result<Option<VectorPos>, MessageError> {
        let Some(p) = self.field(id) else {
            return Ok(None);
        };
        let rel = u32_at(self.body, p).ok_or_else(|| self.out_of_bounds(field))? as usize;
        let at = p
            .checked_add(rel)
            .ok_or_else(|| self.out_of_bounds(field))?;
        let len = u32_at(self.body, at).ok_or_else(|| self.out_of_bounds(field))? as usize;
        let start = at + 4;
        let end = len
            .checked_mul(elem)
            .and_then(|b| b.checked_add(start))
            .ok_or_else(|| self.out_of_bounds(field))?;
        if end > self.body.len() {
            return Err(self.out_of_bounds(field));
        }
        Ok(Some(VectorPos { start, len }))
    }

    /// Like [`RootTable::vector`] but the field must be present.
    pub(crate) fn required_vector(
        &self,
        id: usize,
        elem: usize,
        field: &'static str,
    ) -> Result<VectorPos, MessageError> {
        self.vector(id, elem, field)?
            .ok_or(MessageError::MissingField {
                table: self.name,
                field,
            })
    }
}
