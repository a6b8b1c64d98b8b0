/**
 * The relay logs through src/log.ts, the one log shape of every process: one JSON line per event
 * class (a switch, a NACK, a store error), never one per resource.
 */
export { errorMessage, silentLogger, type Logger as RelayLogger, type LogLevel } from '../log.js';
