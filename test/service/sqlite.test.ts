import { serviceSuite } from './suite.js';
import { listingSuite } from './listings.js';
import { sqliteFactory } from './helpers.js';

serviceSuite(sqliteFactory);
listingSuite(sqliteFactory);
