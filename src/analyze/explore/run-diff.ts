/** Two runs compared, through the saved query run-diff (one definition for CLI and explorer). */
import type { Tabular } from '../../render/table.js';
import type { Db } from '../../store/db.js';
import { findSavedQuery, runSavedQuery } from '../queries.js';

export async function diffRuns(db: Db, base: string, head: string, threshold = 50): Promise<Tabular> {
  return runSavedQuery(db, findSavedQuery('run-diff'), { base, head, threshold: String(threshold) });
}
