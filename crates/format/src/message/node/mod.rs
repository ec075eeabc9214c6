//! `ProllyTreeNode` (`TUPM`): the verified view [`Node`] and the writer [`NodeWriter`].
//!
//! A leaf holds key and value tuples; an internal node holds the last key of each child, the
//! children's addresses and their row counts. See `schema/prolly.fbs`.
//!
//! * `layout`: the table's fields, and where a node's parts are ([`NodeLayout`]).
//! * `view`: the view [`Node`] and its accessors.
//! * `verify`: the ways to make a [`Node`] from bytes.
//! * `entries`: the scan over a node's pairs ([`Entries`]).
//! * `writer`: [`NodeWriter`] writing whole nodes from their parts.
//! * `replace`: [`NodeWriter`] writing a node again with one or a few items changed.

mod entries;
mod layout;
#[cfg(test)]
mod reference;
mod replace;
mod verify;
mod view;
mod writer;

pub use entries::{Entries, Items};
pub use layout::NodeLayout;
#[cfg(test)]
pub(super) use reference::ReferenceWriter;
#[cfg(test)]
pub(super) use verify::verify_checks_agree;
pub use view::Node;
pub use writer::{InternalInput, LeafInput, NodeWriter};

#[cfg(test)]
mod tests;
