/**
 * LoadingMark is the 18px open double ring of the empty-reply placeholder. The
 * two rings turn in opposite directions while trading radius and stroke width
 * (styles/loading-mark.css). It is decorative: the placeholder's text says
 * what is happening.
 */
export function LoadingMark() {
  return (
    <svg className="loading-mark" width="18" height="18" viewBox="0 0 18 18" aria-hidden="true" focusable="false">
      <circle className="loading-mark-outer" cx="9" cy="9" r="7" pathLength="100" />
      <circle className="loading-mark-inner" cx="9" cy="9" r="4" pathLength="100" />
    </svg>
  );
}
