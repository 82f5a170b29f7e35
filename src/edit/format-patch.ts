import { quote } from './diff-paths.js';
import type { PatchFile } from './unified-diff.js';

/** Prints one file section in `git apply`'s dialect: `diff --git`, explicit modes, `a/` `b/`. */
export function formatPatchFile(file: PatchFile): string {
  const oldPath = file.oldPath ?? file.newPath ?? '';
  const newPath = file.newPath ?? file.oldPath ?? '';
  const out = [`diff --git ${quote(`a/${oldPath}`)} ${quote(`b/${newPath}`)}`];
  if (file.status === 'added') out.push(`new file mode ${file.newMode ?? '100644'}`);
  else if (file.status === 'deleted') out.push(`deleted file mode ${file.oldMode ?? '100644'}`);
  else if (file.oldMode !== null && file.newMode !== null && file.oldMode !== file.newMode) {
    out.push(`old mode ${file.oldMode}`, `new mode ${file.newMode}`);
  }
  if (file.status === 'renamed' || file.status === 'copied') {
    const verb = file.status === 'renamed' ? 'rename' : 'copy';
    if (file.similarity !== null) out.push(`similarity index ${file.similarity}`);
    out.push(`${verb} from ${quote(oldPath)}`, `${verb} to ${quote(newPath)}`);
  }
  if (file.indexLine !== null) out.push(file.indexLine);
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
