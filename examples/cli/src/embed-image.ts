import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'

// Non-blocking: opening a FIFO for reading would otherwise wait for a writer, and hang the export.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK
/** Larger files are shown by path: an export is one page, held whole in memory. */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024

/** How each embeddable type starts: the signature that must open the file. */
const SIGNATURES: Record<string, (bytes: Uint8Array) => boolean> = {
  'image/png': (b) => starts(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  'image/jpeg': (b) => starts(b, [0xff, 0xd8, 0xff]),
  'image/gif': (b) => ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a'),
  'image/webp': (b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP'),
}

/**
 * An image file a session refers to, as a `data:` URL to embed in its HTML export; `undefined`
 * (shown by path) unless it is still a regular file, at most 20 MiB, whose bytes are an image of
 * the type the history names (PNG, JPEG, GIF or WebP). A transcript is a file people share: a
 * history that calls any other file an image (a key, a config) must not put it in the page.
 */
export function embedImage(part: { path: string; mimeType: string }): string | undefined {
  const isType = SIGNATURES[part.mimeType]
  if (isType === undefined) return undefined
  let fd: number
  try {
    fd = openSync(part.path, FLAGS)
  } catch {
    return undefined
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile() || stat.size > MAX_IMAGE_BYTES) return undefined
    const bytes = Buffer.alloc(stat.size)
    let read = 0
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, read)
      if (n === 0) break
      read += n
    }
    const data = bytes.subarray(0, read)
    return isType(data) ? `data:${part.mimeType};base64,${data.toString('base64')}` : undefined
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

function starts(bytes: Uint8Array, signature: readonly number[]): boolean {
  return signature.every((byte, i) => bytes[i] === byte)
}

function ascii(bytes: Uint8Array, at: number, text: string): boolean {
  return [...text].every((char, i) => bytes[at + i] === char.charCodeAt(0))
}
