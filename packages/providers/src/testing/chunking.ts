/** A small seeded PRNG (mulberry32): the same seed gives the same chunk sizes on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** How a scripted body is cut into writes. */
export interface ChunkOptions {
  /** Largest chunk in bytes; each chunk is 1..maxBytes. Default 200. */
  maxBytes?: number
  /** Seed of the size sequence. Default 1. */
  seed?: number
}

/**
 * Cuts bytes into irregular chunks of 1..maxBytes, ignoring character and event boundaries, so
 * multi-byte UTF-8 characters and SSE lines get split the way TCP splits them.
 */
export function splitBytes(bytes: Uint8Array, options: ChunkOptions = {}): Uint8Array[] {
  const max = Math.max(1, options.maxBytes ?? 200)
  const random = seededRandom(options.seed ?? 1)
  const chunks: Uint8Array[] = []
  for (let offset = 0; offset < bytes.length; ) {
    const size = 1 + Math.floor(random() * max)
    chunks.push(bytes.subarray(offset, offset + size))
    offset += size
  }
  return chunks
}
