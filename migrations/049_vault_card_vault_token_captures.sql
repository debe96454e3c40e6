-- Cards captured with one cardvaultuser token, posted with the token itself or by any vaulting
-- app session it opened (limits.cardVaultCapturesPerTokenMax; the token's row is the one its
-- sessions share for their failed attempts, migration 011). Counted before the card is looked at.
ALTER TABLE modal_auth_uses ADD COLUMN captures integer NOT NULL DEFAULT 0 CHECK (captures >= 0);
