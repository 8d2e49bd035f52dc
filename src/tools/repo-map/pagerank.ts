/**
 * Personalised PageRank by power iteration over a weighted directed graph. Written here because
 * graphology-metrics' pagerank (2.4) takes no personalisation vector, and personalisation is the
 * point: the focus and the thread pull the ranking towards what the task is about.
 *
 * `edges` maps `from * nodeCount + to` to a weight. Without `personal`, the teleport is uniform.
 * Rank of dangling nodes (no out-edges) teleports like the rest.
 */
export function pagerank(nodeCount: number, edges: Map<number, number>, personal?: Float64Array, damping = 0.85): Float64Array {
  const n = nodeCount;
  if (n === 0) return new Float64Array(0);
  const teleport = new Float64Array(n);
  const personalTotal = personal ? personal.reduce((sum, weight) => sum + weight, 0) : 0;
  for (let i = 0; i < n; i++) teleport[i] = personal && personalTotal > 0 ? (personal[i] ?? 0) / personalTotal : 1 / n;

  const sources = new Int32Array(edges.size);
  const targets = new Int32Array(edges.size);
  const weights = new Float64Array(edges.size);
  const outWeight = new Float64Array(n);
  let e = 0;
  for (const [key, weight] of edges) {
    const from = Math.floor(key / n);
    sources[e] = from;
    targets[e] = key - from * n;
    weights[e] = weight;
    outWeight[from] = (outWeight[from] ?? 0) + weight;
    e++;
  }

  let rank = Float64Array.from(teleport);
  for (let iteration = 0; iteration < 100; iteration++) {
    const next = new Float64Array(n);
    let dangling = 0;
    for (let i = 0; i < n; i++) if ((outWeight[i] ?? 0) === 0) dangling += rank[i] ?? 0;
    for (let k = 0; k < e; k++) {
      const from = sources[k] ?? 0;
      const to = targets[k] ?? 0;
      next[to] = (next[to] ?? 0) + ((rank[from] ?? 0) * (weights[k] ?? 0)) / (outWeight[from] ?? 1);
    }
    let change = 0;
    for (let i = 0; i < n; i++) {
      const value = (1 - damping) * (teleport[i] ?? 0) + damping * ((next[i] ?? 0) + dangling * (teleport[i] ?? 0));
      change += Math.abs(value - (rank[i] ?? 0));
      next[i] = value;
    }
    rank = next;
    if (change < 1e-10) break;
  }
  return rank;
}
