/**
 * @deprecated The principal lives in identity/principal.ts. This re-export is
 * kept only for modules/stream, whose split is in flight on another branch;
 * delete it once those files import from identity/.
 */
export type { Principal } from '../../identity/principal.js';
