/** Route prefixes of the two layouts; `:project` and `:version` are checked against the served project. */
export const CURRENT = 'api/service-v0/project/:project/:version';
export const LEGACY = 'service-v0/:project/:version';
