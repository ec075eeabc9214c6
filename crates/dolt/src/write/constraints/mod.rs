//! The constraints a row change must pass, as Dolt's SQL engine enforces them: apart from the
//! tables' storage (`tables/`), which calls them at these points only:
//!
//! * `checks`: CHECK constraints, through the writer's expression engine
//!   ([`crate::expressions`]): `RowChecks::for_schema` once per table, `RowChecks::check` per
//!   written row.
//! * `foreign_keys`: the root value's `ForeignKeyCollection` as Dolt keeps it (`load`,
//!   `set_root_foreign_keys`); new keys resolved as Dolt's `CREATE TABLE`/`ALTER TABLE` resolve
//!   them (`prepare_new_table`, `resolve_new`: generated names, the index Dolt adds); and the
//!   checks of a changed table (`check_change`: a child row needs its parent, a parent row
//!   still referenced may not go; `check_rows_have_parents` for a new key over stored rows).
//! * `fk_actions`: ON DELETE/UPDATE CASCADE and SET NULL carried out as Dolt's engine carries
//!   them out, recursively within MySQL's depth limit (`Tables::carry_out`); SET DEFAULT
//!   refused with Dolt's own message, as Dolt 2.3.1 refuses it.
//!
//! Only tables named in a key or with a CHECK pay for these.

pub(crate) mod checks;
pub(crate) mod fk_actions;
pub(crate) mod foreign_keys;
