/* storage.js: the browser storage the page uses (language choice, API token).
 *
 * localStorage can be missing or refuse writes (private mode, disabled storage); every
 * access here fails quietly instead of breaking the page.
 */

/** The localStorage keys of this page. */
export const STORE = { lang: 'codeweaver.lang', token: 'codeweaver.token' };

/** localStorage that fails quietly (private mode, disabled storage). */
export const storage = {
  get(key) {
    try { return window.localStorage.getItem(key); } catch { return null; }
  },
  set(key, value) {
    try { window.localStorage.setItem(key, value); } catch { /* not persisted */ }
  },
};
