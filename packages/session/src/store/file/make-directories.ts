import { mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException).code

/**
 * `mkdir -p`: makes `path` and its missing parents; a directory already there is fine. Node's own
 * `mkdir(path, { recursive: true })` never returns for some paths, such as any under Linux's
 * `/proc` (it retries a parent it cannot create forever), which would hang a store opened on a
 * mistyped directory. This makes each missing level once, so it ends with the system's error
 * (`ENOENT`, `EACCES`, `ENOTDIR`) wherever a level cannot be made.
 */
export async function makeDirectories(path: string): Promise<void> {
  try {
    await mkdir(path)
    return
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return
    const parent = dirname(path)
    if (codeOf(error) !== 'ENOENT' || parent === path) throw error
    await makeDirectories(parent)
  }
  try {
    await mkdir(path)
  } catch (error) {
    // Made meanwhile by another process or store.
    if (codeOf(error) !== 'EEXIST') throw error
  }
}
