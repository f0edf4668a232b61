/* sources.js: the numbered source list under an answer, and the `[n]` citation links in
 * the answer that point at it.
 *
 * Titles, names and attributions come from the web: textContent only. Only http(s) URLs
 * become links.
 */
import { el } from './dom.js';

/** Only http(s) links become clickable; anything else (javascript:, data:) stays text. */
function isWebUrl(url) {
  return typeof url === 'string' && /^https?:\/\//i.test(url.trim());
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
  const list = el('ol', 'source-list');
  for (const source of sources) {
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
    title.textContent = String(source.title || source.url || '');
    item.append(number, title);
    if (source.source) {
      const name = el('span', 'source-name');
      name.textContent = String(source.source);
      item.append(name);
    }
    if (source.attribution) {
      const credit = el('span', 'source-attribution');
      credit.textContent = String(source.attribution);
      item.append(credit);
    }
    list.append(item);
  }
  section.append(list);
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
  for (const other of answer.querySelectorAll('.source-list > li.highlight')) {
    other.classList.remove('highlight');
    other.removeAttribute('aria-current');
  }
  item.classList.add('highlight');
  item.setAttribute('aria-current', 'true');
  item.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  item.focus({ preventScroll: true });
}
