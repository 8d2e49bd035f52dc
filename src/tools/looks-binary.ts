// Its own module: the repo map's parser workers need it without loading git (simple-git) into each of them.

/** Git's own test for binary content: a NUL byte in the first 8000 bytes. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}
