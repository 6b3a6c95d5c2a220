// @ts-check
// The player view (/players/<id or identifier>?range=30d): one player across every server the
// key may read — names, identifiers, sessions, event types — and their timeline, newest first;
// and the lookup (/players?name=Jay): every player seen under a name (POST /v1/logs/players).
// Built on POST /v1/logs/player; the files that name the player on POST /v1/objects/search.
import { api, sentence, retryable } from './api.js';
import { h, when, shortTime, errorBox, empty, thumbnailUrl } from './ui.js';

/** @type {[string, string, number][]} */
const RANGES = [
  ['24h', '24 h', 1],
  ['7d', '7 days', 7],
  ['30d', '30 days', 30],
  ['90d', '90 days', 90],
];

/** The console's link to a player (an id or an identifier). */
export function playerHref(player) {
  return `/players/${encodeURIComponent(player)}`;
}

/** A player id or identifier as a link to the player view. */
export function playerLink(player, label = player) {
  return h(
    'a',
    { href: playerHref(player), 'data-link': true, title: `Player view of ${player}` },
    label,
  );
}

/** The identifier as a search names it: `kind:value` (the value may be stored without its kind). */
function identifierOf(kind, value) {
  return value.startsWith(`${kind}:`) ? value : `${kind}:${value}`;
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return '';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return h ? `${h} h ${m} min` : `${m} min`;
}

/** The player page: one visit's state (the timeline's cursor). */
export function playersView() {
  /** @type {{ body: any, cursor: string | null } | null} */
  let view = null;

  async function render(root, ctx) {
    if (location.pathname === '/players' || location.pathname === '/players/')
      return lookup(root, ctx);
    return show(root, ctx);
  }

  /** The form to find a player, and the players seen under a name. */
  async function lookup(root, { params, navigate }) {
    document.title = 'Find a player · Stowage console';
    const name = (params.get('name') || '').trim();
    root.append(h('h1', {}, 'Find a player'), finder(navigate, name));
    if (!name) return;
    const range = RANGES.find((r) => r[0] === params.get('range')) || RANGES[2];
    const to = new Date();
    const from = new Date(to.getTime() - range[2] * 86400000);
    /** @type {any} */
    let found;
    try {
      found = await api('POST', '/logs/players', {
        json: { name, from: from.toISOString(), to: to.toISOString() },
      });
    } catch (err) {
      root.append(errorBox(sentence(err)));
      return;
    }
    if (!found.matches.length) {
      root.append(
        empty(
          `Nobody was called “${name}” in the last ${range[1]}.`,
          'Names are matched whole (either case) where events carry one: data.playerName, data.player_name or data.name. Try an identifier instead.',
        ),
      );
      return;
    }
    root.append(
      h(
        'section',
        { class: 'card' },
        h('h2', {}, `Seen as “${name}” in the last ${range[1]}`),
        h(
          'ul',
          { class: 'plain', id: 'name-matches' },
          found.matches.map((m) =>
            h(
              'li',
              {},
              playerLink(m.player),
              h(
                'span',
                { class: 'muted' },
                ` · ${m.names.join(', ')} · ${m.count} event${m.count === 1 ? '' : 's'} on ${m.servers.join(', ')} · last ${when(m.lastSeen)}`,
              ),
            ),
          ),
        ),
        found.sampled
          ? h('p', { class: 'muted small' }, 'From the newest 500 events of each server.')
          : null,
      ),
    );
  }

  /** A box that opens a player by identifier or id, or looks a name up. */
  function finder(navigate, value = '') {
    const input = h('input', {
      type: 'search',
      name: 'who',
      value,
      placeholder: 'license:…, discord:…, an in-game id, or a name',
      'aria-label': 'A player identifier, id or name',
    });
    return h(
      'form',
      {
        class: 'toolbar',
        role: 'search',
        onsubmit: (e) => {
          e.preventDefault();
          const who = input.value.trim();
          if (!who) return;
          // `kind:value` and bare numbers are ids; anything else is a name
          if (/^[A-Za-z0-9]+:\S/.test(who) || /^\d+$/.test(who)) navigate(playerHref(who));
          else navigate(`/players?name=${encodeURIComponent(who)}`);
        },
      },
      input,
      h('button', { type: 'submit', class: 'primary' }, 'Find'),
    );
  }

  async function show(root, { me, params }) {
    const player = decodeURIComponent(location.pathname.slice('/players/'.length));
    document.title = `${player} · Players · Stowage console`;
    const range = RANGES.find((r) => r[0] === params.get('range')) || RANGES[2];
    const to = new Date();
    const from = new Date(to.getTime() - range[2] * 86400000);
    view = {
      body: { player, from: from.toISOString(), to: to.toISOString(), limit: 50 },
      cursor: null,
    };
    root.append(
      h(
        'div',
        { class: 'row' },
        h('h1', {}, 'Player ', h('span', { class: 'mono' }, player)),
        h('a', { href: '/players', 'data-link': true, class: 'button ghost' }, 'Find another'),
        h(
          'nav',
          { class: 'ranges', 'aria-label': 'Time range' },
          RANGES.map(([v, label]) =>
            h(
              'a',
              {
                href: `${playerHref(player)}?range=${v}`,
                'data-link': true,
                class: 'button ghost',
                'aria-current': v === range[0] ? 'page' : false,
              },
              label,
            ),
          ),
        ),
      ),
    );
    /** @type {any} */
    let page;
    try {
      page = await api('POST', '/logs/player', { json: view.body });
    } catch (err) {
      root.append(errorBox(sentence(err), retryable(err) ? () => location.reload() : undefined));
      return;
    }
    if (!view) return;
    const s = page.summary;
    if (!s || s.examined === 0) {
      root.append(
        empty(
          `No events of ${player} in the last ${range[1]}.`,
          page.servers.length
            ? `Looked on ${page.servers.join(', ')}. Try a longer range, or another of the player's identifiers.`
            : 'This key may not read the logs of any server with an active Logs source.',
        ),
      );
      return;
    }
    const files = h(
      'section',
      { class: 'card wide', id: 'player-files' },
      h('h2', {}, 'Files'),
      h('p', { class: 'muted' }, 'Looking for files…'),
    );
    root.append(summary(player, s, page.servers, range[0]));
    if (me.permissions.cdn.includes('read')) root.append(files);
    root.append(timeline(page));
    if (me.permissions.cdn.includes('read')) await playerFiles(files, player, s);
  }

  /**
   * The files whose metadata names the player (screenshot-basic uploads carry the player's
   * identifiers), newest first, as a grid of pictures.
   */
  async function playerFiles(box, player, s) {
    // every identifier as the events carried it (both forms), the player's own first; at most 20
    const values = [player];
    for (const [kind, list] of Object.entries(s.identifiers))
      for (const v of list)
        for (const form of [v.value, identifierOf(kind, v.value)])
          if (!values.includes(form)) values.push(form);
    /** @type {any} */
    let found;
    try {
      found = await api('POST', '/objects/search', {
        json: { metadataValues: values.slice(0, 20), sort: 'lastModified', limit: 24 },
      });
    } catch (err) {
      box.replaceChildren(h('h2', {}, 'Files'), h('p', { class: 'muted' }, sentence(err)));
      return;
    }
    if (!view) return;
    const items = found.objects.map((o) =>
      h(
        'a',
        {
          class: 'tile',
          href: o.publicUrl,
          target: '_blank',
          rel: 'noopener',
          title: `${o.key} · ${when(o.lastModified)}`,
        },
        (o.contentType || '').startsWith('image/')
          ? h('img', {
              src: thumbnailUrl(o.publicUrl),
              alt: o.key,
              loading: 'lazy',
              // an image delivery cannot resize (damaged, too many pixels) shows as it is
              onerror: (e) => {
                const img = /** @type {HTMLImageElement} */ (e.target);
                if (img.src !== o.publicUrl) img.src = o.publicUrl;
              },
            })
          : h('span', { class: 'tile-name' }, o.key.split('/').pop()),
        h(
          'span',
          { class: 'tile-when muted small' },
          `${o.key.split('/').pop()} · ${shortTime(o.lastModified)}`,
        ),
      ),
    );
    box.replaceChildren(
      ...[
        h('h2', {}, 'Files'),
        items.length
          ? h('div', { class: 'tiles' }, items)
          : h(
              'p',
              { class: 'muted' },
              'No file names this player in its metadata (uploads that carry their identifiers show here).',
            ),
        found.continuationToken
          ? h('p', { class: 'muted small' }, 'The newest 24 are shown.')
          : null,
      ].filter(Boolean),
    );
  }

  function summary(player, s, servers, range) {
    // `license:abc` and `abc` under `license` are one identifier: counted together
    /** @type {Map<string, number>} */
    const counts = new Map();
    for (const [kind, values] of Object.entries(s.identifiers))
      for (const v of values) {
        const id = identifierOf(kind, v.value);
        counts.set(id, (counts.get(id) || 0) + v.count);
      }
    const ids = [...counts].map(([id, count]) =>
      h('li', {}, playerLink(id), h('span', { class: 'muted' }, ` ${count.toLocaleString()}`)),
    );
    const seenWith = (title, list, render) =>
      h(
        'section',
        { class: 'card' },
        h('h2', {}, title),
        list.length
          ? h(
              'ul',
              { class: 'plain' },
              list.map((v) => h('li', {}, render(v))),
            )
          : h('p', { class: 'muted' }, 'None seen.'),
      );
    const searchAll = `/logs?server=${encodeURIComponent(servers[0] || '')}&range=${range}&player=${encodeURIComponent(player)}`;
    return h(
      'div',
      { class: 'player-summary' },
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Seen'),
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'First'),
          h('dd', {}, when(s.firstSeen)),
          h('dt', {}, 'Last'),
          h('dd', {}, when(s.lastSeen)),
          h('dt', {}, 'Events'),
          h('dd', {}, `${s.examined.toLocaleString()}${s.sampled ? ' (the newest)' : ''}`),
          h('dt', {}, 'Servers'),
          h('dd', {}, s.servers.map((v) => `${v.value} (${v.count})`).join(', ')),
        ),
        h(
          'a',
          { href: searchAll, 'data-link': true, class: 'button ghost' },
          'Search their events',
        ),
      ),
      seenWith('Names', s.names, (v) => [v.value, h('span', { class: 'muted' }, ` ${v.count}`)]),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Identifiers'),
        ids.length ? h('ul', { class: 'plain' }, ids) : h('p', { class: 'muted' }, 'None seen.'),
      ),
      seenWith('Event types', s.eventTypes.slice(0, 10), (v) => [
        v.value,
        h('span', { class: 'muted' }, ` ${v.count}`),
      ]),
      h(
        'section',
        { class: 'card wide' },
        h('h2', {}, 'Sessions'),
        s.sessions.length
          ? h(
              'div',
              { class: 'table-wrap' },
              h(
                'table',
                { class: 'events', id: 'sessions' },
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    h('th', {}, 'Server'),
                    h('th', {}, 'Joined'),
                    h('th', {}, 'Left'),
                    h('th', {}, 'Duration'),
                  ),
                ),
                h(
                  'tbody',
                  {},
                  s.sessions
                    .slice(0, 20)
                    .map((x) =>
                      h(
                        'tr',
                        {},
                        h('td', {}, x.serverId),
                        h('td', {}, x.joinedAt ? when(x.joinedAt) : '—'),
                        h('td', {}, x.leftAt ? when(x.leftAt) : 'still on, or not seen'),
                        h('td', {}, duration(x.durationSeconds)),
                      ),
                    ),
                ),
              ),
            )
          : h('p', { class: 'muted' }, 'No joins or leaves in this range.'),
      ),
    );
  }

  /** Whether `id`/`identifiers` (one side of an event) name `player`. */
  function names(player, id, identifiers) {
    if (id === player) return true;
    return Object.entries(identifiers || {}).some(
      ([kind, v]) => v === player || `${kind}:${v}` === player,
    );
  }

  function row(e) {
    const player = view?.body.player;
    const role = names(player, e.player_id, e.player_identifiers) ? 'actor' : 'target';
    return h(
      'tr',
      {},
      h('td', { class: 'nowrap', title: when(e.occurred_at) }, shortTime(e.occurred_at)),
      h('td', {}, e.server_id),
      h('td', {}, h('span', { class: `lvl ${e.level}` }, e.level)),
      h('td', { class: 'hide-narrow' }, e.event_type),
      h('td', { class: 'hide-narrow' }, role),
      h('td', { class: 'msg' }, e.message),
    );
  }

  function timeline(page) {
    const rows = h('tbody', { id: 'player-rows' }, page.events.map(row));
    const box = h(
      'section',
      { class: 'card wide' },
      h('h2', {}, 'Timeline'),
      h(
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
              h('th', {}, 'Server'),
              h('th', {}, 'Level'),
              h('th', { class: 'hide-narrow' }, 'Type'),
              h('th', { class: 'hide-narrow' }, 'As'),
              h('th', {}, 'Message'),
            ),
          ),
          rows,
        ),
      ),
    );
    const more = (cursor) => {
      if (!cursor || !view) return;
      view.cursor = cursor;
      box.append(
        h(
          'button',
          {
            type: 'button',
            class: 'more',
            onclick: async (ev) => {
              const button = /** @type {HTMLButtonElement} */ (ev.currentTarget);
              button.disabled = true;
              try {
                /** @type {any} */
                const next = await api('POST', '/logs/player', {
                  json: { ...view?.body, cursor: view?.cursor },
                });
                button.remove();
                rows.append(...next.events.map(row));
                more(next.pagination.nextCursor);
              } catch (err) {
                button.disabled = false;
                box.append(errorBox(sentence(err)));
              }
            },
          },
          'Load more',
        ),
      );
    };
    more(page.pagination.nextCursor);
    return box;
  }

  return {
    render,
    leave() {
      view = null;
    },
  };
}
