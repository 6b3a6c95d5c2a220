// @ts-check
// The log explorer: the whole search lives in the URL (/logs?server=…&range=1h&minLevel=warn…),
// so a link reproduces it and the back button returns to the previous one. Built on
// /v1/logs/search (the query over any window within retention), /counts, /facets, /patterns,
// /export and /tail.
import { api, query, sentence, retryable } from './api.js';
import { h, toast, when, shortTime, errorBox, empty, dialog, field, copy } from './ui.js';
import { playerLink } from './players.js';
import { savedControls } from './saved.js';

const LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'];
/** @type {[string, string, number][]} value, label, minutes */
const PRESETS = [
  ['15m', '15 min', 15],
  ['1h', '1 hour', 60],
  ['6h', '6 hours', 360],
  ['24h', '24 hours', 1440],
  ['7d', '7 days', 10080],
  ['30d', '30 days', 43200],
  ['90d', '90 days', 129600],
];
const FILTERS = ['eventType', 'resource', 'player', 'identifier', 'message', 'data'];
/** The logs page: one instance per visit, its state its own (`leave` stops its tail). */
export function logsView() {
  let view = null;
  let serverList = null;
  // the plan's retention in minutes: the longest window a search can cover
  let keptMinutes = PRESETS[PRESETS.length - 1][2];

  /** The presets the plan keeps events for (a longer one would search what is gone). */
  function presets() {
    return PRESETS.filter((p, i) => i === 0 || p[2] <= keptMinutes);
  }

  function leave() {
    if (view && view.tail) view.tail.close();
    if (view && view.histogramTimer) clearTimeout(view.histogramTimer);
    view = null;
  }

  /** The effective window of the URL's range. */
  function windowOf(params) {
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
  function zoomedOut(params) {
    const range = params.get('range') || '1h';
    const next = new URLSearchParams(params);
    next.delete('cursor');
    const preset = PRESETS.find((p) => p[0] === range);
    if (range !== 'custom' && preset) {
      const longer = presets().find((p) => p[2] > preset[2]);
      if (!longer) return null;
      next.set('range', longer[0]);
      return next;
    }
    const win = windowOf(params);
    const [from, to] = [Date.parse(win.from), Date.parse(win.to)];
    const now = Date.now();
    const oldest = now - keptMinutes * 60000;
    if (from <= oldest && to >= now - 60000) return null;
    const span = Math.min((to - from) * 2, keptMinutes * 60000);
    const end = Math.min(now, (from + to) / 2 + span / 2);
    const start = Math.max(oldest, end - span);
    next.set('range', 'custom');
    next.set('from', new Date(start).toISOString());
    next.set('to', new Date(end).toISOString());
    return next;
  }

  /** The search fields of the URL, flattened as the export and tail take them. */
  function flatSearch(params) {
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
  function exclusionsOf(params) {
    try {
      const x = JSON.parse(params.get('exclude') || '{}');
      return x && typeof x === 'object' && !Array.isArray(x) ? x : {};
    } catch {
      return {};
    }
  }

  /** The server and preset range last searched in this browser (`localStorage`). */
  function rememberedSearch() {
    try {
      return JSON.parse(localStorage.getItem('stowage.logs') || '{}') || {};
    } catch {
      return {};
    }
  }

  function remember(params) {
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
  function clearedOf(params) {
    const next = new URLSearchParams();
    for (const k of ['server', 'range', 'from', 'to'])
      if (params.get(k)) next.set(k, params.get(k));
    return next;
  }

  /** The URL of this search with `kind: value` added to (or removed from) its exclusions. */
  function withExclusion(params, kind, value, add) {
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
  function jsonSearch(params, win) {
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
    if (!serverList) {
      const overview = await api('GET', '/overview');
      serverList = overview.servers;
      keptMinutes = overview.plan.retentionDays * 1440;
    }
    const servers = serverList;
    if (me.server && !params.get('server')) params.set('server', me.server.cfxId);
    // the last server and preset range of this browser, when the URL names none
    const remembered = rememberedSearch();
    if (!params.get('server') && servers.some((s) => s.cfxId === remembered.server))
      params.set('server', remembered.server);
    if (!params.get('range') && presets().some((p) => p[0] === remembered.range))
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
    view = {
      params,
      navigate,
      body: null,
      cursor: null,
      tail: null,
      lastId: null,
      histogramTimer: null,
    };
    remember(params);
    root.append(searchForm(params, servers, navigate));
    let win;
    let body;
    try {
      win = windowOf(params);
      body = jsonSearch(params, win);
    } catch (err) {
      root.append(errorBox(err.message));
      return;
    }
    view.body = body;
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
              disabled: !zoomedOut(params),
              title: 'Twice the time range (up to what the plan keeps)',
              onclick: () => {
                const next = zoomedOut(params);
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
                  onclick: () => switchView('events'),
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
                  onclick: () => switchView('patterns'),
                },
                'Patterns',
              ),
            ),
            // the saved searches: open one, save this one
            savedControls(params, body, navigate),
            // what acts on the events: the live tail and the exports
            h('span', { class: 'spacer' }),
            h('button', { type: 'button', id: 'tail-toggle', onclick: toggleTail }, 'Live tail'),
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
    await Promise.all([histogram(body), results(body, false), facets(body)]);
  }

  /** The search's exclusions as chips, each removable. */
  function exclusionChips(params, navigate) {
    const x = exclusionsOf(params);
    const names = { levels: 'level', eventTypes: 'type', resources: 'resource', players: 'player' };
    const chips = Object.entries(names).flatMap(([kind, name]) =>
      (x[kind] || []).map((v) =>
        h(
          'button',
          {
            type: 'button',
            class: 'chip',
            title: `Show ${name} ${v} again`,
            onclick: () => navigate(withExclusion(params, kind, v, false)),
          },
          `not ${name}: ${v} ×`,
        ),
      ),
    );
    return h('div', { class: 'chips', id: 'exclusions', hidden: !chips.length }, chips);
  }

  /** The top values of the search, each a click to filter to it or to exclude it. */
  async function facets(body) {
    const box = document.getElementById('facets');
    /** @type {any} */
    let f;
    try {
      f = await api('POST', '/logs/facets', { json: { ...body, top: 8 } });
    } catch (err) {
      box.replaceChildren(h('p', { class: 'muted small' }, sentence(err)));
      return;
    }
    if (!view) return;
    const params = view.params;
    const group = (title, values, param, kind) =>
      values.length
        ? h(
            'section',
            { class: 'facet' },
            h('h3', {}, title),
            h(
              'ul',
              {},
              values.map((v) => {
                const only = new URLSearchParams(params);
                if (param === 'levels') only.delete('minLevel');
                only.set(param, v.value);
                return h(
                  'li',
                  {},
                  h(
                    'a',
                    {
                      href: `/logs?${only}`,
                      'data-link': true,
                      class: 'facet-value',
                      title: `Only ${v.value}`,
                    },
                    h('span', { class: 'facet-name' }, v.value),
                    h('span', { class: 'facet-count muted' }, v.count.toLocaleString()),
                  ),
                  h(
                    'a',
                    {
                      href: withExclusion(params, kind, v.value, true),
                      'data-link': true,
                      class: 'facet-exclude',
                      title: `Exclude ${v.value}`,
                      'aria-label': `Exclude ${v.value}`,
                    },
                    '−',
                  ),
                );
              }),
            ),
          )
        : null;
    // a facet without values is left out (`replaceChildren` would write a null as text)
    const groups = [
      group('Event types', f.eventTypes, 'eventType', 'eventTypes'),
      group('Resources', f.resources, 'resource', 'resources'),
      group('Players', f.players, 'player', 'players'),
      group('Levels', f.levels, 'levels', 'levels'),
    ].filter(Boolean);
    box.replaceChildren(
      ...groups,
      h(
        'p',
        { class: 'muted small' },
        f.sampled
          ? `Counted over the newest ${f.examined.toLocaleString()} events.`
          : `Counted over all ${f.examined.toLocaleString()} events.`,
      ),
    );
  }

  function switchView(which) {
    for (const v of ['events', 'patterns'])
      document.getElementById(`view-${v}`).setAttribute('aria-selected', String(v === which));
    document.getElementById('results').hidden = which !== 'events';
    const box = document.getElementById('patterns');
    box.hidden = which !== 'patterns';
    if (which === 'patterns' && !box.dataset.loaded) patterns(view.body);
  }

  /** The longest run of words in a template: a message term that finds its events. */
  function termOf(template) {
    return template
      .split('<*>')
      .map((part) => part.replace(/["'`]/g, ' ').trim())
      .reduce((a, b) => (b.length > a.length ? b : a), '')
      .slice(0, 256);
  }

  /** A pattern's trend as a tiny bar chart (SVG attributes: the console's CSP allows no inline styles). */
  function trendBars(trend) {
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    const max = Math.max(1, ...trend);
    svg.setAttribute('viewBox', `0 0 ${trend.length * 5} 18`);
    svg.setAttribute('class', 'trend');
    svg.setAttribute('aria-hidden', 'true');
    trend.forEach((n, i) => {
      if (!n) return;
      const bh = Math.max(2, (n / max) * 18);
      const r = document.createElementNS(ns, 'rect');
      r.setAttribute('x', String(i * 5));
      r.setAttribute('y', String(18 - bh));
      r.setAttribute('width', '4');
      r.setAttribute('height', String(bh));
      svg.append(r);
    });
    return svg;
  }

  async function patterns(body) {
    const box = document.getElementById('patterns');
    box.replaceChildren(h('p', { class: 'muted' }, 'Grouping messages…'));
    /** @type {any} */
    let p;
    try {
      p = await api('POST', '/logs/patterns', { json: { ...body, top: 100 } });
    } catch (err) {
      box.replaceChildren(errorBox(sentence(err)));
      return;
    }
    if (!view) return;
    box.dataset.loaded = 'true';
    if (!p.patterns.length) {
      box.replaceChildren(
        empty('No events match this search.', 'Widen the time range or clear filters.'),
      );
      return;
    }
    const open = (pattern) => {
      const next = new URLSearchParams(view.params);
      const term = termOf(pattern.template);
      if (term) next.set('message', term);
      if (pattern.resource) next.set('resource', pattern.resource);
      view.navigate(`/logs?${next}`);
    };
    box.replaceChildren(
      h(
        'p',
        { class: 'muted small' },
        `${p.patterns.length} pattern${p.patterns.length === 1 ? '' : 's'} in ${
          p.sampled ? 'the newest ' : ''
        }${p.examined.toLocaleString()} events. Numbers, ids and quoted values show as <*>.`,
      ),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'events patterns' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { class: 'num' }, 'Count'),
              h('th', {}, 'Pattern'),
              h('th', { class: 'hide-narrow' }, 'Resource'),
              h('th', { class: 'hide-narrow' }, 'Last seen'),
              h('th', { class: 'hide-narrow' }, 'Trend'),
            ),
          ),
          h(
            'tbody',
            { id: 'pattern-rows' },
            p.patterns.map((pattern) =>
              h(
                'tr',
                {
                  tabindex: '0',
                  title: `Example: ${pattern.example}`,
                  onclick: () => open(pattern),
                  onkeydown: (k) => {
                    if (k.key === 'Enter') open(pattern);
                  },
                },
                h('td', { class: 'num' }, pattern.count.toLocaleString()),
                h('td', { class: 'msg mono' }, pattern.template),
                h('td', { class: 'hide-narrow' }, pattern.resource || ''),
                h(
                  'td',
                  { class: 'hide-narrow nowrap', title: when(pattern.lastSeen) },
                  shortTime(pattern.lastSeen),
                ),
                h('td', { class: 'hide-narrow' }, trendBars(pattern.trend)),
              ),
            ),
          ),
        ),
      ),
    );
  }

  function searchForm(params, servers, navigate) {
    const server = h(
      'select',
      { name: 'server' },
      servers.map((s) =>
        h(
          'option',
          { value: s.cfxId, selected: s.cfxId === params.get('server') },
          `${s.name || s.cfxId} (${s.cfxId})${s.logsActive ? '' : ' — Logs inactive'}`,
        ),
      ),
    );
    const range = h(
      'select',
      { name: 'range' },
      presets().map(([v, label]) =>
        h('option', { value: v, selected: (params.get('range') || '1h') === v }, `Last ${label}`),
      ),
      h('option', { value: 'custom', selected: params.get('range') === 'custom' }, 'Custom'),
    );
    const local = (iso) =>
      iso
        ? new Date(new Date(iso).getTime() - new Date().getTimezoneOffset() * 60000)
            .toISOString()
            .slice(0, 16)
        : '';
    // the oldest instant the plan keeps: a custom range cannot start before it
    const kept = new Date(Date.now() - keptMinutes * 60000).toISOString();
    const from = h('input', {
      type: 'datetime-local',
      name: 'from',
      min: local(kept),
      value: local(params.get('from')),
    });
    const to = h('input', { type: 'datetime-local', name: 'to', value: local(params.get('to')) });
    const custom = h(
      'div',
      { class: 'custom-range', hidden: params.get('range') !== 'custom' },
      field('From', from),
      field('To', to),
    );
    range.addEventListener('change', () => {
      custom.hidden = range.value !== 'custom';
    });
    // one level control: the boxes are the search's levels; "and above" only ticks boxes, so the
    // two can never disagree (a link's `minLevel` arrives as the boxes it means)
    const min = params.get('minLevel');
    const chosen = params.get('levels')
      ? params.get('levels').split(',').filter(Boolean)
      : min
        ? LEVELS.slice(Math.max(0, LEVELS.indexOf(min)))
        : [];
    const levelBoxes = LEVELS.map((l) =>
      h(
        'label',
        { class: `check level-${l}` },
        h('input', { type: 'checkbox', name: 'level', value: l, checked: chosen.includes(l) }),
        ` ${l}`,
      ),
    );
    const minLevel = h(
      'select',
      {
        name: 'minLevel',
        'aria-label': 'Tick this level and the more severe ones',
        onchange: () => {
          const at = LEVELS.indexOf(minLevel.value);
          for (const box of levelBoxes) {
            const input = box.querySelector('input');
            input.checked = at >= 0 && LEVELS.indexOf(input.value) >= at;
          }
        },
      },
      h('option', { value: '' }, 'and above…'),
      LEVELS.map((l) => h('option', { value: l }, `${l} and above`)),
    );
    const input = (name, placeholder) =>
      h('input', {
        type: 'text',
        name,
        value: params.get(name) || '',
        placeholder,
        spellcheck: 'false',
      });
    const inputs = {
      eventType: input('eventType', 'admin.* or player.join'),
      resource: input('resource', 'qb-inventory'),
      player: input('player', 'id, license:…, discord:…'),
      identifier: input('identifier', 'player:license:license:abc'),
      message: input('message', 'text in the message'),
      data: input('data', '{"item": "WEAPON_PISTOL"}'),
    };
    const form = h(
      'form',
      {
        class: 'card search',
        role: 'search',
        onsubmit: (e) => {
          e.preventDefault();
          const next = new URLSearchParams();
          next.set('server', server.value);
          next.set('range', range.value);
          if (range.value === 'custom') {
            if (!from.value || !to.value) {
              toast('A custom range needs both “From” and “To”.', 'error');
              return;
            }
            next.set('from', new Date(from.value).toISOString());
            next.set('to', new Date(to.value).toISOString());
          }
          const levels = levelBoxes
            .map((l) => l.querySelector('input'))
            .filter((i) => i.checked)
            .map((i) => i.value);
          // every box ticked is every level: no filter
          if (levels.length && levels.length < LEVELS.length) next.set('levels', levels.join(','));
          for (const k of FILTERS) if (inputs[k].value.trim()) next.set(k, inputs[k].value.trim());
          // exclusions are made from the values beside the results; a new search keeps them
          if (params.get('exclude')) next.set('exclude', params.get('exclude'));
          navigate(`/logs?${next}`);
        },
      },
      h(
        'div',
        { class: 'search-row' },
        field('Server', server),
        field('Time range', range),
        field('Message contains', inputs.message),
        field('Player', inputs.player),
        field('Event type', inputs.eventType),
      ),
      h('div', { class: 'search-row' }, custom),
      h(
        'div',
        { class: 'search-foot' },
        h('fieldset', { class: 'levels' }, h('legend', {}, 'Levels'), levelBoxes, minLevel),
        h(
          'details',
          {
            class: 'more-filters',
            open: ['resource', 'identifier', 'data'].some((k) => params.get(k)),
          },
          h('summary', {}, 'More filters'),
          h(
            'div',
            { class: 'form-grid' },
            field('Resource', inputs.resource),
            field('Identifier', inputs.identifier, 'owner:key:value'),
            field('Data contains', inputs.data, 'a JSON object'),
          ),
        ),
        h(
          'div',
          { class: 'actions' },
          h('button', { type: 'submit', class: 'primary' }, 'Search'),
          h(
            'a',
            {
              href: `/logs?${clearedOf(params)}`,
              'data-link': true,
              class: 'button ghost',
            },
            'Clear filters',
          ),
          h('a', { href: '/players', 'data-link': true, class: 'button ghost' }, 'Find a player'),
        ),
      ),
    );
    // on a phone the results matter more than the form: it starts folded, naming the search
    const summary = [
      params.get('server'),
      (PRESETS.find((p) => p[0] === (params.get('range') || '1h')) || ['', 'custom range'])[1],
      params.get('levels') || (params.get('minLevel') ? `${params.get('minLevel')}+` : ''),
      ...FILTERS.map((k) => params.get(k)),
    ]
      .filter(Boolean)
      .join(' · ');
    // the page's heading shares the summary's line: the first screen is for results
    return h(
      'details',
      { class: 'search-panel', open: window.matchMedia('(min-width: 721px)').matches },
      h('summary', {}, h('h1', {}, 'Logs'), h('strong', {}, 'Search'), ` ${summary}`),
      form,
    );
  }

  async function histogram(body) {
    const box = document.getElementById('histogram');
    /** @type {import('./types.js').Counts} */
    let c;
    try {
      c = await api('POST', '/logs/counts', { json: { ...body, interval: 'auto' } });
    } catch (err) {
      box.replaceChildren(errorBox(sentence(err)));
      return;
    }
    if (!view) return;
    document.getElementById('total').textContent =
      `${c.total.toLocaleString()} event${c.total === 1 ? '' : 's'} · ${c.interval} buckets`;
    if (c.total === 0) {
      box.replaceChildren(
        empty('No events in this range.', 'Widen the time range or clear filters.'),
      );
      return;
    }
    const W = 1000;
    const H = 160;
    const n = c.buckets.length;
    const bw = W / n;
    const max = Math.max(1, ...c.buckets.map((b) => b.total));
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', `Histogram of ${c.total} events by level`);
    c.buckets.forEach((b, i) => {
      let y = H;
      for (const l of LEVELS) {
        const v = b.levels[l];
        if (!v) continue;
        const bh = (v / max) * (H - 4);
        const r = document.createElementNS(ns, 'rect');
        r.setAttribute('x', String(i * bw + 0.5));
        r.setAttribute('width', String(Math.max(bw - 1, 0.5)));
        r.setAttribute('y', String(y - bh));
        r.setAttribute('height', String(bh));
        r.setAttribute('class', `bar ${l}`);
        r.dataset.bucket = String(i);
        r.dataset.level = l;
        r.dataset.count = String(v);
        const t = document.createElementNS(ns, 'title');
        t.textContent = `${when(b.start)}: ${b.total} events (${LEVELS.filter((x) => b.levels[x])
          .map((x) => `${b.levels[x]} ${x}`)
          .join(', ')})`;
        r.append(t);
        svg.append(r);
        y -= bh;
      }
    });
    const sel = document.createElementNS(ns, 'rect');
    sel.setAttribute('class', 'selection');
    sel.setAttribute('y', '0');
    sel.setAttribute('height', String(H));
    sel.setAttribute('width', '0');
    svg.append(sel);
    const bucketAt = (e) => {
      const r = svg.getBoundingClientRect();
      return Math.min(n - 1, Math.max(0, Math.floor(((e.clientX - r.left) / r.width) * n)));
    };
    let start = null;
    svg.addEventListener('pointerdown', (e) => {
      start = bucketAt(e);
      try {
        svg.setPointerCapture(e.pointerId);
      } catch {
        /* not a live pointer */
      }
    });
    svg.addEventListener('pointermove', (e) => {
      if (start === null) return;
      const a = Math.min(start, bucketAt(e));
      const b = Math.max(start, bucketAt(e));
      sel.setAttribute('x', String(a * bw));
      sel.setAttribute('width', String((b - a + 1) * bw));
    });
    svg.addEventListener('pointerup', (e) => {
      if (start === null) return;
      const a = Math.min(start, bucketAt(e));
      const b = Math.max(start, bucketAt(e));
      start = null;
      const from = new Date(Math.max(Date.parse(c.buckets[a].start), Date.parse(c.range.from)));
      const to = new Date(
        Math.min(Date.parse(c.buckets[b].start) + c.intervalSeconds * 1000, Date.parse(c.range.to)),
      );
      const next = new URLSearchParams(view.params);
      next.set('range', 'custom');
      next.set('from', from.toISOString());
      next.set('to', to.toISOString());
      view.navigate(`/logs?${next}`);
    });
    const scale = h(
      'div',
      { class: 'scale muted small', 'aria-hidden': 'true' },
      h('span', {}, max.toLocaleString()),
      h('span', {}, '0'),
    );
    box.replaceChildren(h('div', { class: 'plot' }, scale, svg), axis(c));
  }

  /** Ticks under the histogram: hours (or minutes) within a day, days over longer ranges. */
  function axis(c) {
    const from = Date.parse(c.range.from);
    const to = Date.parse(c.range.to);
    const span = Math.max(1, to - from);
    const MIN = 60000;
    const steps = [5, 15, 30, 60, 180, 360, 720, 1440, 2880, 10080].map((m) => m * MIN);
    // at most about eight ticks, on local clock boundaries
    const step = steps.find((s) => span / s <= 8) || steps[steps.length - 1];
    const days = step >= 1440 * MIN;
    const first = new Date(from);
    if (days) first.setHours(0, 0, 0, 0);
    else
      first.setMinutes((Math.floor(first.getMinutes() / (step / MIN)) * (step / MIN)) % 60, 0, 0);
    const ticks = [];
    for (let t = first.getTime(); t <= to; t += step) {
      if (t < from) continue;
      const d = new Date(t);
      const label = days
        ? d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })
        : d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
      const tick = h('span', { class: 'tick', title: when(d.toISOString()) }, label);
      // CSSOM, not a style attribute: the console's CSP allows no inline styles
      tick.style.left = `${((t - from) / span) * 100}%`;
      ticks.push(tick);
    }
    return h(
      'div',
      {
        class: 'axis muted small',
        'aria-label': `From ${when(c.range.from)} to ${when(c.range.to)}`,
      },
      ticks,
    );
  }

  /** While a live tail runs, the histogram follows it (at most every five seconds). */
  function refreshHistogram() {
    if (!view || view.histogramTimer) return;
    view.histogramTimer = setTimeout(() => {
      if (!view) return;
      view.histogramTimer = null;
      const params = view.params;
      // a preset range moves with the clock; a custom one stays as chosen
      const win = params.get('range') === 'custom' ? {} : windowOf(params);
      histogram({ ...view.body, ...win });
    }, 5000);
  }

  function eventRow(e, fresh) {
    return h(
      'tr',
      {
        class: fresh ? 'fresh' : '',
        tabindex: '0',
        onclick: () => showEvent(e),
        onkeydown: (k) => {
          if (k.key === 'Enter') showEvent(e);
        },
      },
      h('td', { class: 'nowrap', title: when(e.occurred_at) }, shortTime(e.occurred_at)),
      h('td', {}, h('span', { class: `lvl ${e.level}` }, e.level)),
      h('td', { class: 'hide-narrow' }, e.event_type || ''),
      h('td', { class: 'hide-narrow' }, e.resource || ''),
      h(
        'td',
        { class: 'hide-narrow', onclick: (ev) => ev.stopPropagation() },
        e.player_id ? playerLink(e.player_id) : '',
      ),
      h('td', { class: 'msg' }, e.message || ''),
    );
  }

  function table() {
    return h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'events' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Time'),
            h('th', {}, 'Level'),
            h('th', { class: 'hide-narrow' }, 'Type'),
            h('th', { class: 'hide-narrow' }, 'Resource'),
            h('th', { class: 'hide-narrow' }, 'Player'),
            h('th', {}, 'Message'),
          ),
        ),
        h('tbody', { id: 'event-rows' }),
      ),
    );
  }

  async function results(body, more) {
    const box = document.getElementById('results');
    /** @type {import('./types.js').EventPage} */
    let page;
    try {
      page = await api('POST', '/logs/search', {
        json: { ...body, limit: 100, cursor: more ? view.cursor : undefined },
      });
    } catch (err) {
      const stale = err.code === 'CURSOR_EXPIRED' || err.code === 'INVALID_CURSOR';
      if (stale) {
        // "Load more" of a search kept too long: the rows stay, the search starts again from
        // its newest events on request
        box.querySelector('.more')?.remove();
        box.append(
          errorBox(
            sentence(err),
            () => view && view.navigate(location.pathname + location.search),
            'Search again',
          ),
        );
      } else if (!more) {
        box.replaceChildren(
          errorBox(sentence(err), retryable(err) ? () => results(body, false) : undefined),
        );
      } else toast(sentence(err), 'error');
      return;
    }
    if (!view) return;
    if (!more) {
      if (page.events.length === 0) {
        box.replaceChildren(
          empty(
            'No events match this search.',
            'Widen the time range, clear a filter, or start the live tail to watch new events arrive.',
          ),
          table(),
        );
        box.querySelector('table').hidden = true;
        return;
      }
      box.replaceChildren(table());
    }
    const rows = document.getElementById('event-rows');
    for (const e of page.events) rows.append(eventRow(e, false));
    view.cursor = page.pagination.nextCursor;
    box.querySelector('.more')?.remove();
    if (page.pagination.hasMore)
      box.append(
        h(
          'button',
          { type: 'button', class: 'more', onclick: () => results(body, true) },
          'Load more',
        ),
      );
  }

  /**
   * A value with a copy button, and links to filter to it or exclude it when given.
   * @param {string} text
   * @param {{copyAs: string, only?: string, exclude?: string}} opts
   */
  function valueCell(text, { copyAs, only, exclude }) {
    return h(
      'dd',
      {},
      h('span', { class: 'value' }, text),
      h(
        'button',
        {
          type: 'button',
          class: 'icon',
          title: `Copy ${copyAs}`,
          'aria-label': `Copy ${copyAs}`,
          onclick: () => copy(text, copyAs),
        },
        'Copy',
      ),
      only
        ? h(
            'a',
            { href: only, 'data-link': true, class: 'small', title: 'Only events with this value' },
            'filter',
          )
        : null,
      exclude
        ? h(
            'a',
            {
              href: exclude,
              'data-link': true,
              class: 'small',
              title: 'Leave out events with this value',
            },
            'exclude',
          )
        : null,
    );
  }

  /** This search with `key` set to `value` (and what contradicts it dropped). */
  function onlyHref(key, value) {
    const next = new URLSearchParams(view.params);
    if (key === 'levels') next.delete('minLevel');
    next.set(key, value);
    return `/logs?${next}`;
  }

  /** `data` as an indented tree; a leaf filters to (or excludes) events whose data holds it. */
  function dataTree(value, path) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return h(
        'ul',
        { class: 'tree' },
        Object.entries(value).map(([k, v]) =>
          h('li', {}, h('span', { class: 'key' }, `${k}: `), dataTree(v, [...path, k])),
        ),
      );
    }
    const text = JSON.stringify(value);
    if (Array.isArray(value) || !path.length) return h('code', {}, text);
    // the containment object of this one leaf: {"a": {"b": value}}
    const object = path.reduceRight((inner, k) => ({ [k]: inner }), value);
    const excluded = { ...exclusionsOf(view.params), data: object };
    const next = new URLSearchParams(view.params);
    next.set('exclude', JSON.stringify(excluded));
    return h(
      'span',
      {},
      h('code', {}, text),
      ' ',
      h(
        'a',
        { href: onlyHref('data', JSON.stringify(object)), 'data-link': true, class: 'small' },
        'filter',
      ),
      ' ',
      h('a', { href: `/logs?${next}`, 'data-link': true, class: 'small' }, 'exclude'),
    );
  }

  /** An event as people read it: the message first, then its fields, its data, its neighbours. */
  function showEvent(e) {
    const fields = [];
    const add = (label, text, opts) => {
      if (text === null || text === undefined || text === '') return;
      fields.push(
        h('dt', {}, label),
        valueCell(String(text), { copyAs: label.toLowerCase(), ...opts }),
      );
    };
    add('Time', when(e.occurred_at), {});
    add('Level', e.level, {
      only: onlyHref('levels', e.level),
      exclude: withExclusion(view.params, 'levels', e.level, true),
    });
    add('Type', e.event_type, {
      only: onlyHref('eventType', e.event_type),
      exclude: withExclusion(view.params, 'eventTypes', e.event_type, true),
    });
    add('Resource', e.resource, {
      only: onlyHref('resource', e.resource),
      exclude: withExclusion(view.params, 'resources', e.resource, true),
    });
    for (const [label, id, identifiers] of [
      ['Player', e.player_id, e.player_identifiers],
      ['Target', e.target_player_id, e.target_player_identifiers],
    ]) {
      if (id) {
        fields.push(
          h('dt', {}, label),
          h(
            'dd',
            {},
            playerLink(id),
            ' ',
            h('a', { href: onlyHref('player', id), 'data-link': true, class: 'small' }, 'filter'),
          ),
        );
      }
      for (const [kind, v] of Object.entries(identifiers || {})) {
        const ident = String(v).startsWith(`${kind}:`) ? String(v) : `${kind}:${v}`;
        fields.push(h('dt', {}, `${label} ${kind}`), h('dd', {}, playerLink(ident, String(v))));
      }
    }
    add('Trace', e.trace_id, {});
    add('Environment', e.environment, {});
    add('Event id', e.event_id, {});
    add('Server', e.server_id, {});
    add('Ingested', when(e.ingested_at), {});
    add('Batch', e.batch_id, {});
    const t = Date.parse(e.occurred_at);
    const around = new URLSearchParams({
      server: view.params.get('server') || e.server_id,
      range: 'custom',
      from: new Date(t - 60000).toISOString(),
      to: new Date(t + 60000).toISOString(),
    });
    dialog(
      `${e.level} · ${e.event_type || 'event'}`,
      h(
        'div',
        {
          class: 'event-detail',
          // a link from the detail (filter, exclude, player, neighbours) leaves the dialog
          onclick: (ev) => {
            const target = /** @type {Element} */ (ev.target);
            if (target.closest('a[data-link]')) target.closest('dialog')?.close();
          },
        },
        h(
          'div',
          { class: 'message-box' },
          h('div', { class: 'message' }, e.message),
          h(
            'button',
            {
              type: 'button',
              class: 'icon',
              title: 'Copy message',
              'aria-label': 'Copy message',
              onclick: () => copy(e.message, 'Message'),
            },
            'Copy',
          ),
        ),
        h('dl', { class: 'facts' }, fields),
        e.data ? h('section', {}, h('h3', {}, 'Data'), dataTree(e.data, [])) : null,
        h(
          'p',
          {},
          h(
            'a',
            { href: `/logs?${around}`, 'data-link': true, class: 'button ghost', id: 'around' },
            'Events around this one (±1 min, this server)',
          ),
        ),
        h(
          'details',
          {},
          h('summary', {}, 'Raw JSON'),
          h('pre', { class: 'code json' }, JSON.stringify(e, null, 2)),
        ),
      ),
      [['Close', '']],
    );
  }

  function toggleTail() {
    const button = document.getElementById('tail-toggle');
    const status = document.getElementById('tail-state');
    if (view.tail) {
      view.tail.close();
      view.tail = null;
      button.textContent = 'Resume tail';
      status.textContent = 'Paused.';
      return;
    }
    const params = { ...flatSearch(view.params), lastEventId: view.lastId };
    const source = new EventSource(`/api/v1/logs/tail${query(params)}`);
    view.tail = source;
    button.textContent = 'Pause tail';
    status.textContent = 'Connecting…';
    source.addEventListener('open', () => {
      status.textContent = 'Live: new events appear at the top.';
    });
    source.addEventListener('log', (m) => {
      view.lastId = m.lastEventId;
      const e = JSON.parse(m.data);
      let rows = document.getElementById('event-rows');
      if (!rows) {
        document.getElementById('results').replaceChildren(table());
        rows = document.getElementById('event-rows');
      }
      rows.closest('table').hidden = false;
      document.querySelector('#results .empty')?.remove();
      rows.prepend(eventRow(e, true));
      refreshHistogram();
    });
    source.addEventListener('gap', () =>
      toast(
        'Some events may have been missed while the tail was paused; search the range to see them.',
      ),
    );
    source.addEventListener('end', () => {
      source.close();
      view.tail = null;
      button.textContent = 'Live tail';
      status.textContent = 'The tail ended: the key can no longer read logs.';
    });
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) {
        view.tail = null;
        button.textContent = 'Live tail';
        status.textContent =
          'The tail could not start (too many tails open, or the session ended). Try again in a few seconds.';
      } else status.textContent = 'Reconnecting…';
    });
  }

  return { render, leave };
}
