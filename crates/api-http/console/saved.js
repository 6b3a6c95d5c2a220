// @ts-check
// Saved searches on the logs page: a list to open one (its filters and servers, over the range
// on screen), "Save search" for the search on screen, and a dialog to rename or delete them.
// Built on /v1/logs/saved-searches.
import { api, sentence } from './api.js';
import { h, toast, dialog, field, empty } from './ui.js';

/** Filters of a saved search the logs page has no box for: opening one says so. */
const UNSHOWN = ['playerId', 'dataWhere'];

/**
 * The logs page's URL for a saved search: its filters, the server on screen when the search
 * reads it (or `["*"]`), else its first server, and the range on screen.
 * @param {import('./types.js').SavedSearch} s
 * @param {URLSearchParams} params
 */
export function savedSearchUrl(s, params) {
  const next = new URLSearchParams();
  const here = params.get('server');
  const all = s.serverIds.includes('*');
  const server = all || (here && s.serverIds.includes(here)) ? here : s.serverIds[0];
  if (server) next.set('server', server);
  for (const k of ['range', 'from', 'to']) if (params.get(k)) next.set(k, params.get(k) || '');
  const f = s.search || {};
  if (f.levels) next.set('levels', f.levels.join(','));
  else if (f.level) next.set('levels', f.level);
  else if (f.minLevel) next.set('minLevel', f.minLevel);
  for (const k of ['eventType', 'resource', 'player', 'message']) if (f[k]) next.set(k, f[k]);
  if (f.identifier)
    next.set('identifier', `${f.identifier.owner}:${f.identifier.key}:${f.identifier.value}`);
  if (f.data !== undefined) next.set('data', JSON.stringify(f.data));
  if (f.exclude) next.set('exclude', JSON.stringify(f.exclude));
  next.set('saved', s.id);
  return `/logs?${next}`;
}

/**
 * The filters of the page's search body (query JSON) as a saved search's `search`.
 * @param {Record<string, any>} body
 */
function filtersOf(body) {
  const { serverId: _server, from: _from, to: _to, ...filters } = body;
  return filters;
}

/**
 * The saved-search controls of the logs page.
 * @param {URLSearchParams} params
 * @param {Record<string, any>} body the search on screen (the query's JSON body)
 * @param {(url: string) => void} navigate
 */
export function savedControls(params, body, navigate) {
  const pick = h(
    'select',
    { 'aria-label': 'Saved searches', class: 'saved-pick' },
    h('option', { value: '' }, 'Saved searches…'),
  );
  /** @type {import('./types.js').SavedSearch[]} */
  let list = [];
  async function load() {
    try {
      /** @type {{ savedSearches: import('./types.js').SavedSearch[] }} */
      const answer = await api('GET', '/logs/saved-searches');
      list = answer.savedSearches;
    } catch (err) {
      toast(sentence(err), 'error');
      return;
    }
    pick.replaceChildren(
      h('option', { value: '' }, list.length ? 'Saved searches…' : 'No saved searches yet'),
      ...list.map((s) =>
        h('option', { value: s.id, selected: s.id === params.get('saved') }, s.name),
      ),
      ...(list.length ? [h('option', { value: '#manage' }, 'Rename or delete…')] : []),
    );
    // opened from a link that names only the saved search (an alert's "open in console"): its
    // servers and filters (the page fills in a server of its own, so the address is asked)
    const here = new URLSearchParams(location.search);
    const named = list.find((s) => s.id === params.get('saved'));
    if (
      named &&
      location.pathname === '/logs' &&
      here.get('saved') === named.id &&
      !here.get('server')
    )
      navigate(savedSearchUrl(named, params));
  }
  pick.addEventListener('change', () => {
    const id = pick.value;
    if (id === '#manage') {
      pick.value = params.get('saved') || '';
      manage(list, params, navigate).then(load);
      return;
    }
    const s = list.find((x) => x.id === id);
    if (!s) return;
    const unshown = UNSHOWN.filter((k) => s.search[k] !== undefined);
    if (unshown.length)
      toast(
        `“${s.name}” also filters by ${unshown.join(' and ')}, which this page cannot show: the results here leave that out. The API runs it whole.`,
        'error',
      );
    navigate(savedSearchUrl(s, params));
  });
  const save = h(
    'button',
    {
      type: 'button',
      class: 'ghost',
      title: 'Save the filters of this search (not its time range) for everyone who reads logs',
      onclick: async () => {
        const name = h('input', {
          type: 'text',
          maxlength: '100',
          value: list.find((s) => s.id === params.get('saved'))?.name || '',
        });
        const choice = await dialog(
          'Save search',
          h(
            'div',
            {},
            field('Name', name, 'Everyone in the organization who reads logs sees it'),
            h(
              'p',
              { class: 'muted' },
              `Server ${body.serverId}; the filters on screen. The time range is chosen when it is opened.`,
            ),
          ),
          [
            ['Cancel', ''],
            ['Save', 'save', 'primary'],
          ],
        );
        if (choice !== 'save') return;
        try {
          /** @type {{ savedSearch: import('./types.js').SavedSearch }} */
          const made = await api('POST', '/logs/saved-searches', {
            json: { name: name.value, serverIds: [body.serverId], search: filtersOf(body) },
          });
          toast(`Saved “${made.savedSearch.name}”.`);
          const next = new URLSearchParams(params);
          next.set('saved', made.savedSearch.id);
          navigate(`/logs?${next}`);
        } catch (err) {
          toast(sentence(err), 'error');
        }
      },
    },
    'Save search',
  );
  const alert = params.get('saved')
    ? h(
        'a',
        {
          href: `/alerts?new=${encodeURIComponent(params.get('saved') || '')}`,
          'data-link': true,
          class: 'button ghost',
          title: 'Tell Discord or a webhook when this saved search finds events',
        },
        'Alert on this search',
      )
    : null;
  load();
  return h('div', { class: 'saved-searches' }, pick, save, alert);
}

/**
 * The dialog that renames and deletes saved searches.
 * @param {import('./types.js').SavedSearch[]} list
 * @param {URLSearchParams} params
 * @param {(url: string) => void} navigate
 */
async function manage(list, params, navigate) {
  const rows = list.map((s) => {
    const name = h('input', {
      type: 'text',
      value: s.name,
      maxlength: '100',
      'aria-label': 'Name',
    });
    const row = h(
      'li',
      {},
      name,
      h(
        'span',
        { class: 'muted' },
        s.serverIds.includes('*') ? 'every server' : s.serverIds.join(', '),
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'ghost compact',
          onclick: async () => {
            try {
              await api('PATCH', `/logs/saved-searches/${encodeURIComponent(s.id)}`, {
                json: { name: name.value },
              });
              toast(`Renamed to “${name.value.trim()}”.`);
            } catch (err) {
              toast(sentence(err), 'error');
            }
          },
        },
        'Rename',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger compact',
          onclick: async () => {
            try {
              await api('DELETE', `/logs/saved-searches/${encodeURIComponent(s.id)}`);
              row.remove();
              toast(`Deleted “${s.name}”.`);
              if (params.get('saved') === s.id) {
                const next = new URLSearchParams(params);
                next.delete('saved');
                navigate(`/logs?${next}`);
              }
            } catch (err) {
              toast(sentence(err), 'error');
            }
          },
        },
        'Delete',
      ),
    );
    return row;
  });
  await dialog(
    'Saved searches',
    rows.length
      ? h('ul', { class: 'saved-list' }, rows)
      : empty('No saved searches.', 'Search, then “Save search”.'),
    [['Done', '']],
  );
}
