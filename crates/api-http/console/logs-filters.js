// @ts-check
// The log explorer's search form and the chips of its exclusions.
import { h, toast, field } from './ui.js';
import {
  LEVELS,
  PRESETS,
  FILTERS,
  presets,
  exclusionsOf,
  clearedOf,
  withExclusion,
} from './logs-search.js';

export function searchForm(state, params, servers, navigate) {
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
    presets(state).map(([v, label]) =>
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
  const kept = new Date(Date.now() - state.keptMinutes * 60000).toISOString();
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

/** The search's exclusions as chips, each removable. */
export function exclusionChips(params, navigate) {
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
