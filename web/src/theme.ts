// The theme: `dark` or `light`, set as data-theme on <html> so the tokens in
// styles/theme.css apply. The choice is remembered; the first visit follows
// the system preference.
export type Theme = 'dark' | 'light';

const KEY = 'folio.theme';

export function initialTheme(): Theme {
  try {
    const saved = localStorage.getItem(KEY);
    if (saved === 'dark' || saved === 'light') return saved;
  } catch {
    // Storage can be unavailable (private modes); fall back to the system.
  }
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme): void {
  document.documentElement.dataset.theme = theme;
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // Not remembering is fine.
  }
}
