// @ts-check
// The object browser's shared pieces: its paths and sorts, and the page's state (one typed object
// the panels share).

export const parent = (p) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
export const base = (k) => k.slice(k.lastIndexOf('/') + 1);
export const link = (path) => `/objects${path ? `?path=${encodeURIComponent(path)}` : ''}`;
/** The sorts of the search, by column: the API's `sort` and its label. */
export const SORTS = [
  ['key', 'Name'],
  ['size', 'Size'],
  ['lastModified', 'Modified'],
];

/**
 * The folder (or search) on screen: who is signed in, its URL, its entries and next page, the
 * selection, the search and sort, list or grid, the object whose details are shown.
 * @typedef {{me: any, path: string, params: URLSearchParams, navigate: (to: string) => void,
 *   entries: any[], token: string | null, selected: Set<string>, root: HTMLElement, q: string,
 *   sort: string, order: string, search: boolean, grid: boolean, shown: string | null}} Folder
 */
/**
 * The files page's state, one per visit, shared by its panels: the folder on screen (`null` once
 * the page is left: a read that answers late then draws nothing).
 * @typedef {{view: Folder | null}} ObjectsState
 */
