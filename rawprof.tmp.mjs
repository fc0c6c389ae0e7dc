import { DuckDBInstance } from '@duckdb/node-api';
import { detectFile } from '/work/main/dist/src/ingest/detect.js';
import { jsonBufferBytes } from '/work/main/dist/src/ingest/jsonl.js';
const file = process.argv[2]; const mode = process.argv[3] ?? 'ctas';
const JSON_COLUMNS = `{record_type:'VARCHAR', trace_id:'VARCHAR', span_id:'VARCHAR', span_name:'VARCHAR', parent_span_id:'VARCHAR',
  links:'JSON', event_id:'VARCHAR', start_time_unix_nano:'VARCHAR', end_time_unix_nano:'VARCHAR', time_unix_nano:'VARCHAR',
  severity_number:'VARCHAR', severity_text:'VARCHAR', body:'VARCHAR', status:'JSON', event_type:'VARCHAR', attributes:'JSON'}`;
const inst = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
const c = await inst.connect();
const buf = `, maximum_object_size = ${jsonBufferBytes(await detectFile(file))}`;
await c.run(`PRAGMA enable_profiling='json'; PRAGMA profiling_output='/tmp/exp/rawprof.json'`);
const c0 = process.cpuUsage(); const t0 = performance.now();
const src = `read_json('${file}', format = 'newline_delimited', columns = ${JSON_COLUMNS}${mode.includes('tuned') ? buf : ''})`;
if (mode.startsWith('count')) await c.run(`SELECT count(*) FROM (SELECT * FROM ${src})`); else await c.run(`CREATE TABLE t AS SELECT * FROM ${src}`);
const cu = process.cpuUsage(c0);
console.log(mode, 'wall', (performance.now()-t0).toFixed(0), 'cpu', ((cu.user+cu.system)/1000).toFixed(0));
