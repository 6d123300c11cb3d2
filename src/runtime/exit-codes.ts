/**
 * The exit code of a server start refused because the project does not load and no earlier build can be
 * served (EX_CONFIG of sysexits.h): `drey dev` then waits for a fix instead of stopping.
 */
export const EXIT_PROJECT_INVALID = 78;
