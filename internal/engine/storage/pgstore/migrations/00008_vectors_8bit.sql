-- +goose Up
-- Vectors 8-bit (vecset/quant.go): component i is q's byte i, signed,
-- times scale (max |v[i]| / 127). The float rows are converted here;
-- pgvector's partial indexes, made on cardinality(v), go with v and are
-- made again on length(q) by the next engine that stores a vector.
ALTER TABLE vectors ADD COLUMN scale real, ADD COLUMN q bytea;
UPDATE vectors t SET scale = c.m / 127, q = c.q
FROM (
    SELECT s.id, s.m,
        (SELECT decode(coalesce(string_agg(lpad(to_hex((CASE WHEN s.m = 0 THEN 0 ELSE round(x / s.m * 127)::int END + 256) % 256), 2, '0'), '' ORDER BY i), ''), 'hex')
         FROM unnest(s.v) WITH ORDINALITY AS u(x, i)) AS q
    FROM (SELECT id, v, (SELECT coalesce(max(abs(x)), 0) FROM unnest(v) AS x) AS m FROM vectors) s
) c
WHERE c.id = t.id;
ALTER TABLE vectors DROP COLUMN v CASCADE;
ALTER TABLE vectors ALTER COLUMN scale SET NOT NULL, ALTER COLUMN q SET NOT NULL;

-- +goose Down
ALTER TABLE vectors ADD COLUMN v real[];
UPDATE vectors SET v = (SELECT coalesce(array_agg(((get_byte(q, i) + 128) % 256 - 128) * scale ORDER BY i), '{}') FROM generate_series(0, length(q) - 1) AS i);
ALTER TABLE vectors ALTER COLUMN v SET NOT NULL, DROP COLUMN scale, DROP COLUMN q;
