// @ts-check
// The log explorer's event detail: the message, its fields (each a filter or an exclusion), its
// data and its neighbours.
import { h, when, dialog, copy } from './ui.js';
import { playerLink } from './players.js';
import { exclusionsOf, withExclusion, onlyHref } from './logs-search.js';

/**
 * A value with a copy button, and links to filter to it or exclude it when given.
 * @param {string} text
 * @param {{copyAs: string, only?: string, exclude?: string}} opts
 */
export function valueCell(text, { copyAs, only, exclude }) {
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

/** `data` as an indented tree; a leaf filters to (or excludes) events whose data holds it. */
export function dataTree(state, value, path) {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return h(
      'ul',
      { class: 'tree' },
      Object.entries(value).map(([k, v]) =>
        h('li', {}, h('span', { class: 'key' }, `${k}: `), dataTree(state, v, [...path, k])),
      ),
    );
  }
  const text = JSON.stringify(value);
  if (Array.isArray(value) || !path.length) return h('code', {}, text);
  // the containment object of this one leaf: {"a": {"b": value}}
  const object = path.reduceRight((inner, k) => ({ [k]: inner }), value);
  const excluded = { ...exclusionsOf(state.view.params), data: object };
  const next = new URLSearchParams(state.view.params);
  next.set('exclude', JSON.stringify(excluded));
  return h(
    'span',
    {},
    h('code', {}, text),
    ' ',
    h(
      'a',
      { href: onlyHref(state, 'data', JSON.stringify(object)), 'data-link': true, class: 'small' },
      'filter',
    ),
    ' ',
    h('a', { href: `/logs?${next}`, 'data-link': true, class: 'small' }, 'exclude'),
  );
}

/** An event as people read it: the message first, then its fields, its data, its neighbours. */
export function showEvent(state, e) {
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
    only: onlyHref(state, 'levels', e.level),
    exclude: withExclusion(state.view.params, 'levels', e.level, true),
  });
  add('Type', e.event_type, {
    only: onlyHref(state, 'eventType', e.event_type),
    exclude: withExclusion(state.view.params, 'eventTypes', e.event_type, true),
  });
  add('Resource', e.resource, {
    only: onlyHref(state, 'resource', e.resource),
    exclude: withExclusion(state.view.params, 'resources', e.resource, true),
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
          h(
            'a',
            { href: onlyHref(state, 'player', id), 'data-link': true, class: 'small' },
            'filter',
          ),
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
    server: state.view.params.get('server') || e.server_id,
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
      e.data ? h('section', {}, h('h3', {}, 'Data'), dataTree(state, e.data, [])) : null,
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
