-- The text lists filter on is kept in Unicode NFC from now on, and query strings are read in NFC
-- (src/domain/text.ts canonicalText, docs/resources.md "Lists"): a surname sent decomposed (`u` +
-- U+0308, as macOS and some clients write `ü`) was stored as sent, and an exact filter typed with
-- the composed letter did not find it. Rows stored before are brought to NFC here, so the filters,
-- which now search in NFC, still find them. Only a UTF8 database can hold such text (normalize()
-- refuses other encodings, in which there is nothing to compose).
DO $$
BEGIN
  IF current_setting('server_encoding') <> 'UTF8' THEN
    RETURN;
  END IF;
  UPDATE bookings
     SET firstname = normalize(firstname, NFC), surname = normalize(surname, NFC), email = normalize(email, NFC), reference = normalize(reference, NFC)
   WHERE NOT (firstname IS NFC NORMALIZED AND surname IS NFC NORMALIZED AND email IS NFC NORMALIZED AND reference IS NFC NORMALIZED);
  UPDATE transactions
     SET payee_name = normalize(payee_name, NFC), payee_surname = normalize(payee_surname, NFC), payee_email = normalize(payee_email, NFC)
   WHERE NOT (coalesce(payee_name IS NFC NORMALIZED, true) AND coalesce(payee_surname IS NFC NORMALIZED, true) AND coalesce(payee_email IS NFC NORMALIZED, true));
  UPDATE channels
     SET name = normalize(name, NFC), external_id = normalize(external_id, NFC)
   WHERE NOT (name IS NFC NORMALIZED AND external_id IS NFC NORMALIZED);
  UPDATE suppliers
     SET name = normalize(name, NFC), url = normalize(url, NFC)
   WHERE NOT (name IS NFC NORMALIZED AND url IS NFC NORMALIZED);
END
$$;
