/* sources.js: the numbered source list under an answer, and the `[n]` citation links in
 * the answer that point at it.
 *
 * The sources the answer cites are listed; the others it retrieved are collapsed below
 * them. Entries are never merged (citations number them), so two with the same title
 * (two chunks of one page) each show where they point.
 *
 * Titles, names and attributions come from the web: textContent only, isolated from the
 * text around them (CSS `unicode-bidi: isolate`). Only http(s) URLs become links.
 */
import { el } from './dom.js';
import { setText } from './i18n.js';

/** Only http(s) links become clickable; anything else (javascript:, data:) stays text. */
function isWebUrl(url) {
  return typeof url === 'string' && /^https?:\/\//i.test(url.trim());
}

/** How a title compares with another: case and spacing do not make two titles differ. */
function titleKey(source) {
  return String(source.title || source.url || '').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** What tells a source from another of the same title: its reference, else its URL's
 * path and fragment (`library/io.html#io.IOBase.readline`). */
function whereIn(source) {
  if (source.reference) return String(source.reference);
  if (!isWebUrl(source.url)) return '';
  try {
    const url = new URL(source.url.trim());
    const path = url.pathname.split('/').filter(Boolean).slice(-2).join('/');
    return path + url.search + url.hash;
  } catch {
    return '';
  }
}

/** Fill the answer's source section; `sources` are the server's {n, title, url, ...}. */
export function renderSources(answer, sources) {
  const section = answer.sources;
  section.replaceChildren();
  section.hidden = false;
  section.append(el('h4', 'sources-title', 'sources'));
  if (!sources.length) {
    section.append(el('p', 'muted', 'noSources'));
    return;
  }
  const counts = new Map();
  for (const source of sources) {
    counts.set(titleKey(source), (counts.get(titleKey(source)) || 0) + 1);
  }
  const twin = (source) => counts.get(titleKey(source)) > 1;
  // Sources from before `cited` existed count as cited: they were all listed then.
  const cited = sources.filter((s) => s.cited !== false);
  const others = sources.filter((s) => s.cited === false);
  if (cited.length) section.append(sourceList(cited, twin));
  else section.append(el('p', 'muted', 'noneCited'));
  if (others.length) {
    const more = el('details', 'sources-more');
    const summary = el('summary', 'sources-more-summary');
    setText(summary, cited.length ? 'moreSources' : 'retrievedSources', { n: others.length });
    more.append(summary, sourceList(others, twin));
    section.append(more);
  }
}

function sourceList(sources, twin) {
  const list = el('ol', 'source-list');
  for (const source of sources) list.append(sourceItem(source, twin(source)));
  return list;
}

function sourceItem(source, showWhere) {
  const n = Number.parseInt(source.n, 10);
  const item = el('li', 'source');
  item.dataset.n = String(n);
  item.tabIndex = -1; // focusable from a citation, not a tab stop
  const number = el('span', 'source-n');
  number.textContent = '[' + n + ']';
  let title;
  if (isWebUrl(source.url)) {
    title = el('a', 'source-title');
    title.href = source.url.trim();
    title.target = '_blank';
    title.rel = 'noopener noreferrer';
  } else {
    title = el('span', 'source-title');
  }
  title.dir = 'auto';
  title.textContent = String(source.title || source.url || '');
  item.append(number, title);
  const where = showWhere ? whereIn(source) : '';
  if (where) {
    const ref = el('span', 'source-ref');
    ref.dir = 'auto';
    ref.textContent = where;
    item.append(ref);
  }
  const name = source.label || source.source;
  if (name) {
    const tag = el('span', 'source-name');
    tag.textContent = String(name);
    item.append(tag);
  }
  if (source.attribution) {
    const credit = el('span', 'source-attribution');
    credit.dir = 'auto';
    credit.textContent = String(source.attribution);
    item.append(credit);
  }
  return item;
}

/** A click on `[n]` in an answer shows source n of that same answer. */
export function onCitationClick(event) {
  const link = event.target.closest('a.cite');
  if (!link) return;
  event.preventDefault();
  const answer = link.closest('.answer');
  const n = Number.parseInt(link.dataset.n, 10);
  if (!answer || !Number.isInteger(n)) return;
  // n is an integer here, so it is safe inside the selector.
  const item = answer.querySelector('.source-list > li[data-n="' + n + '"]');
  if (!item) return;
  const more = item.closest('details');
  if (more) more.open = true; // a linked source counted as uncited must still show
  for (const other of answer.querySelectorAll('.source-list > li.highlight')) {
    other.classList.remove('highlight');
    other.removeAttribute('aria-current');
  }
  item.classList.add('highlight');
  item.setAttribute('aria-current', 'true');
  item.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  item.focus({ preventScroll: true });
}
