import { useLayoutEffect, useRef, type RefObject } from 'react';

/**
 * useLatest is a ref that holds the value of the last committed render, for
 * effects that must run on their own schedule (mount, a token change) but call
 * the component's current functions.
 */
export function useLatest<T>(value: T): RefObject<T> {
  const ref = useRef(value);
  useLayoutEffect(() => {
    ref.current = value;
  });
  return ref;
}
