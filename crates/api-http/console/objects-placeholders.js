// @ts-check
// The object browser's placeholders: what a missing key under a folder serves instead of a 404.
import { api, sentence } from './api.js';
import { h, toast, dialog, field } from './ui.js';
import { can } from './objects-listing.js';

export async function placeholders(state) {
  let list;
  try {
    list = await api('GET', '/placeholders');
  } catch (err) {
    toast(sentence(err), 'error');
    return;
  }
  const items = list.placeholders || [];
  const pattern = h('input', {
    type: 'text',
    placeholder: 'inventory/items/*.png',
    spellcheck: 'false',
  });
  const fallback = h('input', {
    type: 'text',
    placeholder: 'inventory/missing.png',
    spellcheck: 'false',
  });
  const body = h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      'A missing file whose path matches a pattern is answered with the fallback file (status 404).',
    ),
    items.length
      ? h(
          'table',
          {},
          h(
            'thead',
            {},
            h('tr', {}, h('th', {}, 'Pattern'), h('th', {}, 'Fallback'), h('th', {}, '')),
          ),
          h(
            'tbody',
            {},
            items.map((p, i) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, p.pattern)),
                h('td', {}, h('code', {}, p.fallback)),
                h(
                  'td',
                  {},
                  can(state, 'write')
                    ? // closes the dialog with this row's pattern to remove
                      h(
                        'button',
                        {
                          value: `remove:${i}`,
                          class: 'ghost danger',
                          'aria-label': `Remove the placeholder ${p.pattern}`,
                        },
                        'Remove',
                      )
                    : null,
                ),
              ),
            ),
          ),
        )
      : h('p', {}, 'No placeholders yet.'),
    can(state, 'write') ? [field('Pattern', pattern), field('Fallback file', fallback)] : null,
  );
  const choice = await dialog(
    'Placeholders',
    body,
    can(state, 'write')
      ? [
          ['Close', ''],
          ['Save', 'save', 'primary'],
        ]
      : [['Close', '']],
  );
  try {
    if (choice === 'save') {
      await api('PUT', '/placeholders', {
        json: { pattern: pattern.value.trim(), fallback: fallback.value.trim() },
      });
      toast('Placeholder saved.');
    }
    if (choice.startsWith('remove:')) {
      const removed = items[Number(choice.slice('remove:'.length))];
      await api('DELETE', '/placeholders', { params: { pattern: removed.pattern } });
      toast(`Placeholder ${removed.pattern} removed.`);
    }
  } catch (err) {
    toast(sentence(err), 'error');
  }
}
