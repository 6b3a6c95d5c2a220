// @ts-check
// The log explorer: the whole search lives in the URL (/logs?server=…&range=1h&minLevel=warn…),
// so a link reproduces it and the back button returns to the previous one. Built on
// /v1/logs/search (the query over any window within retention), /counts, /facets, /patterns,
// /export and /tail. The page lays out its panels — the search form and exclusions
// (logs-filters.js), the histogram (logs-histogram.js), the top values and patterns
// (logs-facets.js), the results table (logs-table.js) and an event's detail (logs-detail.js), the
// live tail (logs-tail.js) — over one state (`LogsState`, logs-search.js with the URL's rules).
import { api, query } from './api.js';
import { h, errorBox, empty } from './ui.js';
import { savedControls } from './saved.js';
import {
  LEVELS,
  PRESETS,
  presets,
  windowOf,
  zoomedOut,
  rememberedSearch,
  flatSearch,
  remember,
  jsonSearch,
} from './logs-search.js';
import { searchForm, exclusionChips } from './logs-filters.js';
import { facets, switchView } from './logs-facets.js';
import { histogram } from './logs-histogram.js';
import { results } from './logs-table.js';
import { toggleTail } from './logs-tail.js';

/** The logs page: one instance per visit, its state its own (`leave` stops its tail). */
export function logsView() {
  /** @type {import('./logs-search.js').LogsState} */
  const state = { view: null, serverList: null, keptMinutes: PRESETS[PRESETS.length - 1][2] };

  async function render(root, { me, params, navigate }) {
    document.title = 'Logs · Stowage console';
    // the heading stands alone only when there is no search form (it sits in the form's summary)
    const title = h('h1', {}, 'Logs');
    if (!me.permissions.logs.includes('read')) {
      root.append(
        title,
        empty(
          'This key cannot read logs.',
          'Sign in with a key that has logs:read to search server events.',
        ),
      );
      return;
    }
    // the server list is read once per page load, not before every search
    if (!state.serverList) {
      const overview = await api('GET', '/overview');
      state.serverList = overview.servers;
      state.keptMinutes = overview.plan.retentionDays * 1440;
    }
    const servers = state.serverList;
    if (me.server && !params.get('server')) params.set('server', me.server.cfxId);
    // the last server and preset range of this browser, when the URL names none
    const remembered = rememberedSearch();
    if (!params.get('server') && servers.some((s) => s.cfxId === remembered.server))
      params.set('server', remembered.server);
    if (!params.get('range') && presets(state).some((p) => p[0] === remembered.range))
      params.set('range', remembered.range);
    if (!params.get('server') && servers.length)
      params.set('server', (servers.find((s) => s.logsActive) || servers[0]).cfxId);
    if (!servers.length) {
      root.append(
        title,
        empty(
          'No server sends logs yet.',
          'Register a server and activate its Logs source (stowctl), then send events with the FiveMesh SDK.',
        ),
      );
      return;
    }
    state.view = {
      params,
      navigate,
      body: null,
      cursor: null,
      tail: null,
      lastId: null,
      histogramTimer: null,
    };
    remember(params);
    root.append(searchForm(state, params, servers, navigate));
    let win;
    let body;
    try {
      win = windowOf(params);
      body = jsonSearch(params, win);
    } catch (err) {
      root.append(errorBox(err.message));
      return;
    }
    state.view.body = body;
    const exportLink = (format) =>
      `/api/v1/logs/export${query({ ...flatSearch(params), from: win.from, to: win.to, format })}`;
    root.append(
      h(
        'section',
        { class: 'card histogram-card' },
        h(
          'div',
          { class: 'histogram-head' },
          h('h2', {}, 'Events over time'),
          h('span', { id: 'total', class: 'muted' }),
          h(
            'div',
            { class: 'legend' },
            LEVELS.map((l) => h('span', { class: `key ${l}` }, l)),
          ),
          h('span', { class: 'spacer' }),
          h(
            'button',
            {
              type: 'button',
              class: 'ghost compact',
              id: 'zoom-out',
              disabled: !zoomedOut(state, params),
              title: 'Twice the time range (up to what the plan keeps)',
              onclick: () => {
                const next = zoomedOut(state, params);
                if (next) navigate(`/logs?${next}`);
              },
            },
            'Zoom out',
          ),
        ),
        h(
          'div',
          {
            id: 'histogram',
            class: 'histogram',
            title: 'Drag across the chart (or click a bar) to zoom into that span.',
          },
          h('p', { class: 'muted' }, 'Counting…'),
        ),
      ),
      exclusionChips(params, navigate),
      h(
        'div',
        { class: 'explorer' },
        h(
          'aside',
          { id: 'facets', class: 'facets card', 'aria-label': 'Top values' },
          h('p', { class: 'muted' }, 'Counting values…'),
        ),
        h(
          'div',
          { class: 'explorer-main' },
          h(
            'div',
            { class: 'results-head' },
            h(
              'div',
              { class: 'view-switch', role: 'tablist' },
              h(
                'button',
                {
                  type: 'button',
                  role: 'tab',
                  id: 'view-events',
                  'aria-selected': 'true',
                  onclick: () => switchView(state, 'events'),
                },
                'Events',
              ),
              h(
                'button',
                {
                  type: 'button',
                  role: 'tab',
                  id: 'view-patterns',
                  'aria-selected': 'false',
                  onclick: () => switchView(state, 'patterns'),
                },
                'Patterns',
              ),
            ),
            // the saved searches: open one, save this one
            savedControls(params, body, navigate),
            // what acts on the events: the live tail and the exports
            h('span', { class: 'spacer' }),
            h(
              'button',
              { type: 'button', id: 'tail-toggle', onclick: () => toggleTail(state) },
              'Live tail',
            ),
            h('span', { id: 'tail-state', class: 'muted', role: 'status' }),
            h(
              'a',
              {
                class: 'button ghost',
                id: 'export-ndjson',
                href: exportLink('ndjson'),
                download: '',
              },
              'Export NDJSON',
            ),
            h(
              'a',
              { class: 'button ghost', id: 'export-csv', href: exportLink('csv'), download: '' },
              'Export CSV',
            ),
          ),
          h('div', { id: 'results' }, h('p', { class: 'muted' }, 'Searching…')),
          h('div', { id: 'patterns', hidden: true }),
        ),
      ),
    );
    await Promise.all([histogram(state, body), results(state, body, false), facets(state, body)]);
  }

  function leave() {
    if (state.view && state.view.tail) state.view.tail.close();
    if (state.view && state.view.histogramTimer) clearTimeout(state.view.histogramTimer);
    state.view = null;
  }

  return { render, leave };
}
