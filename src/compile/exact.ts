/**
 * Lists the output keeps, at their exact size. V8 grows an array's store on push by half plus 16
 * slots and never gives the slack back: a two-domain list built by push holds 19 slots (184 bytes
 * where 64 do). The compile output lives through the snapshot build and every full collection
 * marks it, so lists built by push are copied to their length before they go into a message.
 */

/** The list at its exact size (a copy: `slice` allocates the length, not the capacity). */
export const exactList = <T>(list: T[]): T[] => list.slice();
