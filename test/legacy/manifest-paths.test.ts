/** Node files from a manifest or a log: relative to the project, with `/`, never a wrong one. */
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/legacy/manifest.js';
import { projectPath } from '../../src/legacy/resource.js';

const node = (pkg: string, file: string, root?: string) => ({ package_name: pkg, original_file_path: file, ...(root !== undefined ? { root_path: root } : {}) });
const files = (nodes: Record<string, object>, metadata: object = {}) =>
  Object.fromEntries([...parseManifest({ metadata, nodes }).nodes].map(([id, d]) => [id, d.relativePath]));

describe('node files read from a manifest', () => {
  it('Windows paths are read with /; a package under the project is prefixed with its place in it', () => {
    expect(files({
      'model.p.a': node('p', 'models\\staging\\a.sql', 'C:\\work\\p'),
      'model.pkg.b': node('pkg', 'models\\b.sql', 'C:\\work\\p\\dbt_packages\\pkg'),
    })).toEqual({ 'model.p.a': 'models/staging/a.sql', 'model.pkg.b': 'dbt_packages/pkg/models/b.sql' });
  });

  it("a package whose place in the project cannot be known has no file ('') rather than its package-relative one", () => {
    // no root_path (manifest v12): the project is known by name, the package's location is not
    expect(files({ 'model.p.a': node('p', 'models/a.sql'), 'model.pkg.b': node('pkg', 'models/b.sql') }, { project_name: 'p' }))
      .toEqual({ 'model.p.a': 'models/a.sql', 'model.pkg.b': '' });
    // a package installed outside the project
    expect(files({ 'model.p.a': node('p', 'models/a.sql', '/w/p'), 'model.pkg.b': node('pkg', 'models/b.sql', '/elsewhere/pkg') }, { project_name: 'p' }))
      .toEqual({ 'model.p.a': 'models/a.sql', 'model.pkg.b': '' });
  });

  it("a log's node_path written on Windows is read with /", () => {
    expect(projectPath('model', 'model.p.a', 'staging\\a.sql')).toBe('models/staging/a.sql');
  });
});
