import { quote } from './diff-paths.js';
import { canonicalRegularMode, indexLineWithoutMode } from './patch-modes.js';
import type { PatchFile } from './unified-diff.js';

/**
 * Prints one file section in `git apply`'s dialect: `diff --git`, explicit modes, `a/` `b/`.
 * Modes are printed as a regular file's (`100644`, or `100755` when executable) whatever the
 * section stated, and the `index` line loses its mode: nothing this prints makes a symbolic
 * link or a gitlink (admission refuses sections that state one, see `patch-modes.ts`).
 */
export function formatPatchFile(file: PatchFile): string {
  const oldPath = file.oldPath ?? file.newPath ?? '';
  const newPath = file.newPath ?? file.oldPath ?? '';
  const out = [`diff --git ${quote(`a/${oldPath}`)} ${quote(`b/${newPath}`)}`];
  const oldMode = file.oldMode === null ? null : canonicalRegularMode(file.oldMode);
  const newMode = file.newMode === null ? null : canonicalRegularMode(file.newMode);
  if (file.status === 'added') out.push(`new file mode ${newMode ?? '100644'}`);
  else if (file.status === 'deleted') out.push(`deleted file mode ${oldMode ?? '100644'}`);
  else if (oldMode !== null && newMode !== null && oldMode !== newMode) {
    out.push(`old mode ${oldMode}`, `new mode ${newMode}`);
  }
  if (file.status === 'renamed' || file.status === 'copied') {
    const verb = file.status === 'renamed' ? 'rename' : 'copy';
    if (file.similarity !== null) out.push(`similarity index ${file.similarity}`);
    out.push(`${verb} from ${quote(oldPath)}`, `${verb} to ${quote(newPath)}`);
  }
  if (file.indexLine !== null) out.push(indexLineWithoutMode(file.indexLine));
  if (file.binaryPatch !== null) {
    out.push('GIT binary patch', ...file.binaryPatch);
  } else if (file.binary) {
    out.push(
      `Binary files ${file.oldPath === null ? '/dev/null' : quote(`a/${oldPath}`)} and ${file.newPath === null ? '/dev/null' : quote(`b/${newPath}`)} differ`,
    );
  } else if (file.hunks.length > 0) {
    out.push(file.oldPath === null ? '--- /dev/null' : `--- ${quote(`a/${oldPath}`)}`);
    out.push(file.newPath === null ? '+++ /dev/null' : `+++ ${quote(`b/${newPath}`)}`);
    for (const hunk of file.hunks) {
      const section = hunk.section === '' ? '' : ` ${hunk.section}`;
      out.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@${section}`, ...hunk.lines);
    }
  }
  return `${out.join('\n')}\n`;
}
