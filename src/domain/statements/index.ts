export { isStatementPeriod, statementDate, statementPeriods, type StatementPeriod } from './dates.js';
export { buildStatement, fundsAccount, statementCsv, StatementRefusal, type AccountBalance, type Statement, type StatementEntry } from './builder.js';
