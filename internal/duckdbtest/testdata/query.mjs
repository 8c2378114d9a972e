// Runs one SQL query with DuckDB and prints the rows as JSON: the tests'
// independent Parquet reader.
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
const result = await conn.runAndReadAll(sql);
process.stdout.write(JSON.stringify(result.getRowObjectsJson()));
