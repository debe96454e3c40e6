-- A short card number keeps at least five digits hidden (limits.cardPanHiddenDigitsMin): its BIN
-- in clear is three to six digits (a 12-digit Maestro keeps three beside its last four, where six
-- and four left two hidden, ten candidates under the Luhn check). char(6) would pad a shorter BIN
-- with spaces, so the column becomes varchar. Cards stored before this keep their six digits:
-- their numbers are sealed, so their lengths cannot be read here (docs/vault.md).
ALTER TABLE cards DROP CONSTRAINT cards_bin_check;
ALTER TABLE cards ALTER COLUMN bin TYPE varchar(6);
ALTER TABLE cards ADD CONSTRAINT cards_bin_check CHECK (bin ~ '^[0-9]{3,6}$');
