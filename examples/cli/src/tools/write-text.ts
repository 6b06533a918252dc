import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/**
 * Writes `text` to `file` (an absolute path the workspace has already judged) all at once: into a
 * new temporary file beside it, then renamed over it. A full disk or an interrupt leaves the old
 * file as it was, never half written. An existing file keeps its permission bits; missing parent
 * directories are created.
 */
export async function writeTextAtomic(file: string, text: string, signal?: AbortSignal): Promise<void> {
  const dir = dirname(file)
  await mkdir(dir, { recursive: true })
  const mode = await stat(file).then(
    (info) => info.mode & 0o7777,
    () => 0o666,
  )
  const temp = join(dir, `.${basename(file)}.kode-${randomBytes(6).toString('hex')}.tmp`)
  // `wx`: a fresh file, never a link someone placed under the temporary name.
  const handle = await open(temp, 'wx', mode)
  try {
    try {
      await handle.writeFile(text, { encoding: 'utf8', signal })
      await handle.sync()
    } finally {
      await handle.close()
    }
    signal?.throwIfAborted()
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}
