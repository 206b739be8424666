import type { a } from './a';
export const b = 1;
export type A = typeof a;
