/** Ascending arrays of numbers (file indices, line numbers), kept sorted by binary search. */

export function lowerBound(sorted: number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] ?? 0) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

export function insertSorted(sorted: number[], value: number): void {
  const at = lowerBound(sorted, value);
  if (sorted[at] !== value) sorted.splice(at, 0, value);
}

export function removeSorted(sorted: number[], value: number): void {
  const at = lowerBound(sorted, value);
  if (sorted[at] === value) sorted.splice(at, 1);
}
