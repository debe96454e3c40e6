-- Lists sort text fields by code point (COLLATE "C"), not by the collation the database was
-- created with (src/http/pagination.ts codePointOrder). Supplier ids are text and the supplier
-- list's default order: this index serves it as the primary key served the collation's order.
CREATE INDEX suppliers_id_code_point_idx ON suppliers (id COLLATE "C");
