/** Injection token of the loaded {@link Project}. */
export const PROJECT = Symbol('PROJECT');
