import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:');
const c = await inst.connect();
await c.run(`CREATE TABLE a AS SELECT attributes::VARCHAR AS t FROM read_json('/tmp/big/big.jsonl', format='newline_delimited', columns={attributes:'JSON'})`);
console.log((await c.runAndReadAll(`SELECT avg(strlen(t)), sum(strlen(t)) FROM a`)).getRows());
const needles = process.argv.slice(2);
for (let rep = 0; rep < 3; rep++) for (const n of needles) {
  const sql = n.startsWith('SQL:') ? `SELECT count(*) FROM a WHERE ${n.slice(4)}` : `SELECT count(*) FROM a WHERE contains(t, '${n}')`;
  const t0 = performance.now();
  const r = (await c.runAndReadAll(sql)).getRows()[0][0];
  console.log(n.padEnd(30), (performance.now() - t0).toFixed(0), String(r));
}
