//! Encoders (and matching field-level decoders) for Dolt's database-level messages: the
//! objects above the prolly trees that make a version-controlled database.
//!
//! * [`CommitFields`] (`DCMT`), [`TagFields`] (`DTAG`), [`WorkingSetFields`] (`WRST`),
//!   [`StoreRootFields`] (`STRT`): the `datas` layer (history and branch heads).
//! * [`RootValueFields`] (`RTVL`), [`TableFields`] (`DTBL`), [`TableSchemaFields`] (`DSCH`):
//!   a database state, one table, one table's schema;
//!   [`ForeignKeyCollectionFields`] (`DFKC`): a database state's foreign keys.
//!
//! Each `encode` builds the message with the Go-compatible builder (`message/builder.rs`) in the
//! order Dolt's Go code creates and adds its fields (which fields are written when empty, which
//! are left out), so the same fields give the same bytes and hence the same chunk address as
//! Dolt. Each `decode` reads a verified chunk back into the same fields; `encode(decode(c)) == c`
//! holds for every such chunk of the golden vector databases (tested in `prollystore-dolt`).
//! Fields Dolt computes (a commit's height from its parents, a schema's
//! `has_features_after_try_accessors` flag) are taken as given on encode, except where noted.

mod commit;
mod foreign_key;
mod root_value;
mod store_root;
mod table;
mod table_schema;
mod tag;
mod working_set;

pub use commit::CommitFields;
pub use foreign_key::{ForeignKeyCollectionFields, ForeignKeyFields};
pub use root_value::RootValueFields;
pub use store_root::StoreRootFields;
pub use table::{ConflictsFields, TableFields};
pub use table_schema::{CheckFields, ColumnFields, IndexFields, TableSchemaFields};
pub use tag::TagFields;
pub use working_set::{MergeStateFields, RebaseStateFields, WorkingSetFields};

use super::{body_with_id, verifier_options, MessageError};

/// File identifier of `Commit` messages.
pub const FILE_ID_COMMIT: &[u8; 4] = b"DCMT";
/// File identifier of `RootValue` messages.
pub const FILE_ID_ROOT_VALUE: &[u8; 4] = b"RTVL";
/// File identifier of `Table` messages.
pub const FILE_ID_TABLE: &[u8; 4] = b"DTBL";
/// File identifier of `TableSchema` messages.
pub const FILE_ID_TABLE_SCHEMA: &[u8; 4] = b"DSCH";
/// File identifier of `WorkingSet` messages.
pub const FILE_ID_WORKING_SET: &[u8; 4] = b"WRST";
/// File identifier of `StoreRoot` messages.
pub const FILE_ID_STORE_ROOT: &[u8; 4] = b"STRT";
/// File identifier of `ForeignKeyCollection` messages.
pub const FILE_ID_FOREIGN_KEYS: &[u8; 4] = b"DFKC";
/// File identifier of `Tag` messages.
pub const FILE_ID_TAG: &[u8; 4] = b"DTAG";

/// Checks prefix and identifier, runs the FlatBuffers verifier, and returns the root table.
fn open<'a, T>(
    chunk: &'a [u8],
    id: &'static [u8; 4],
    table: &'static str,
) -> Result<T::Inner, MessageError>
where
    T: flatbuffers::Follow<'a> + flatbuffers::Verifiable + 'a,
{
    let body = body_with_id(chunk, id)?;
    // A schema holds a table per column, index and check (Dolt allows a thousand columns and
    // more): the count is bounded by the chunk's size, not by the message layout's limit.
    let options = flatbuffers::VerifierOptions {
        max_tables: 1 << 20,
        ..verifier_options()
    };
    flatbuffers::root_with_opts::<T>(&options, body).map_err(|e| MessageError::FlatBuffers {
        table,
        detail: e.to_string(),
    })
}

/// A 20-byte address field, or an error naming it.
fn address_field(
    bytes: &[u8],
    table: &'static str,
    field: &'static str,
) -> Result<[u8; 20], MessageError> {
    bytes.try_into().map_err(|_| MessageError::UnexpectedField {
        table,
        field,
        reason: "must hold exactly 20 bytes",
    })
}

#[cfg(test)]
mod tests;
