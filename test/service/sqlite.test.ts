import { serviceSuite } from './suite.js';
import { sqliteFactory } from './helpers.js';

serviceSuite(sqliteFactory);
