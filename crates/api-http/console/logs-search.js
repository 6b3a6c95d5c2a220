// @ts-check
// The log explorer's search as the URL holds it (/logs?server=…&range=1h&minLevel=warn…): its
// presets, window, exclusions and JSON body, and the page's state (one typed object the panels
// share).

export const LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'];
/** @type {[string, string, number][]} value, label, minutes */
export const PRESETS = [
  ['15m', '15 min', 15],
  ['1h', '1 hour', 60],
  ['6h', '6 hours', 360],
  ['24h', '24 hours', 1440],
  ['7d', '7 days', 10080],
  ['30d', '30 days', 43200],
  ['90d', '90 days', 129600],
];
export const FILTERS = ['eventType', 'resource', 'player', 'identifier', 'message', 'data'];

/**
 * The search on screen: its URL, the JSON body its reads send, the results' cursor, the live tail
 * and its last event, the histogram's pending refresh.
 * @typedef {{params: URLSearchParams, navigate: (to: string) => void, body: any, cursor: string | null,
 *   tail: EventSource | null, lastId: string | null, histogramTimer: any}} Search
 */
/**
 * The logs page's state, one per visit, shared by its panels: the search on screen (`null` once
 * the page is left: a read that answers late then draws nothing), and what is read once per page
 * load — the servers, and the plan's retention in minutes (the longest window a search covers).
 * @typedef {{view: Search | null, serverList: any[] | null, keptMinutes: number}} LogsState
 */

/** The presets the plan keeps events for (a longer one would search what is gone). */
export function presets(state) {
  return PRESETS.filter((p, i) => i === 0 || p[2] <= state.keptMinutes);
}

/** The effective window of the URL's range. */
export function windowOf(params) {
  const range = params.get('range') || '1h';
  if (range === 'custom' && params.get('from') && params.get('to'))
    return { from: params.get('from'), to: params.get('to') };
  const preset = /** @type {[string, string, number]} */ (
    PRESETS.find((p) => p[0] === range) || PRESETS[1]
  );
  const to = new Date();
  return { from: new Date(to.getTime() - preset[2] * 60000).toISOString(), to: to.toISOString() };
}

/**
 * The URL of the search over a longer range, or null when it covers all the plan keeps: a
 * preset grows to the next one; a custom range doubles around its middle (never past now, never
 * older than the plan keeps).
 */
export function zoomedOut(state, params) {
  const range = params.get('range') || '1h';
  const next = new URLSearchParams(params);
  next.delete('cursor');
  const preset = PRESETS.find((p) => p[0] === range);
  if (range !== 'custom' && preset) {
    const longer = presets(state).find((p) => p[2] > preset[2]);
    if (!longer) return null;
    next.set('range', longer[0]);
    return next;
  }
  const win = windowOf(params);
  const [from, to] = [Date.parse(win.from), Date.parse(win.to)];
  const now = Date.now();
  const oldest = now - state.keptMinutes * 60000;
  if (from <= oldest && to >= now - 60000) return null;
  const span = Math.min((to - from) * 2, state.keptMinutes * 60000);
  const end = Math.min(now, (from + to) / 2 + span / 2);
  const start = Math.max(oldest, end - span);
  next.set('range', 'custom');
  next.set('from', new Date(start).toISOString());
  next.set('to', new Date(end).toISOString());
  return next;
}

/** The search fields of the URL, flattened as the export and tail take them. */
export function flatSearch(params) {
  const f = { serverId: params.get('server') };
  if (params.get('levels')) f.levels = params.get('levels');
  else if (params.get('minLevel')) f.minLevel = params.get('minLevel');
  if (params.get('eventType')) f.eventType = params.get('eventType');
  if (params.get('resource')) f.resource = params.get('resource');
  if (params.get('player')) f.player = params.get('player');
  if (params.get('identifier')) f.identifier = params.get('identifier');
  if (params.get('message')) f.message = params.get('message');
  if (params.get('data')) f.data = params.get('data');
  if (params.get('exclude')) f.exclude = params.get('exclude');
  return f;
}

/**
 * The exclusions of the URL (`exclude`, the API's JSON object).
 * @returns {{levels?: string[], eventTypes?: string[], resources?: string[], players?: string[]}}
 */
export function exclusionsOf(params) {
  try {
    const x = JSON.parse(params.get('exclude') || '{}');
    return x && typeof x === 'object' && !Array.isArray(x) ? x : {};
  } catch {
    return {};
  }
}

/** The server and preset range last searched in this browser (`localStorage`). */
export function rememberedSearch() {
  try {
    return JSON.parse(localStorage.getItem('stowage.logs') || '{}') || {};
  } catch {
    return {};
  }
}

export function remember(params) {
  const range = params.get('range');
  try {
    localStorage.setItem(
      'stowage.logs',
      JSON.stringify({
        server: params.get('server'),
        range: PRESETS.some((p) => p[0] === range) ? range : rememberedSearch().range,
      }),
    );
  } catch {
    /* storage refused (private mode): nothing remembered */
  }
}

/** The search's server and range without any filter ("Clear filters" keeps the range). */
export function clearedOf(params) {
  const next = new URLSearchParams();
  for (const k of ['server', 'range', 'from', 'to']) if (params.get(k)) next.set(k, params.get(k));
  return next;
}

/** The URL of this search with `kind: value` added to (or removed from) its exclusions. */
export function withExclusion(params, kind, value, add) {
  const x = exclusionsOf(params);
  const list = (x[kind] || []).filter((v) => v !== value);
  if (add) list.push(value);
  if (list.length) x[kind] = list;
  else delete x[kind];
  const next = new URLSearchParams(params);
  if (Object.keys(x).length) next.set('exclude', JSON.stringify(x));
  else next.delete('exclude');
  return `/logs?${next}`;
}

/** The same search as a JSON body of query/counts. */
export function jsonSearch(params, win) {
  const flat = flatSearch(params);
  const body = { serverId: flat.serverId, from: win.from, to: win.to };
  if (flat.levels) body.levels = flat.levels.split(',');
  if (flat.minLevel) body.minLevel = flat.minLevel;
  for (const k of ['eventType', 'resource', 'player', 'message']) if (flat[k]) body[k] = flat[k];
  if (flat.identifier) {
    const [owner, key, ...value] = flat.identifier.split(':');
    body.identifier = { owner, key, value: value.join(':') };
  }
  if (flat.exclude) body.exclude = exclusionsOf(params);
  if (flat.data) {
    try {
      body.data = JSON.parse(flat.data);
    } catch {
      throw new Error(
        'The data filter is not JSON: write an object such as {"item": "WEAPON_PISTOL"}.',
      );
    }
  }
  return body;
}

/** This search with `key` set to `value` (and what contradicts it dropped). */
export function onlyHref(state, key, value) {
  const next = new URLSearchParams(state.view.params);
  if (key === 'levels') next.delete('minLevel');
  next.set(key, value);
  return `/logs?${next}`;
}
