import type { GenerationSpec } from '../../project-files.js';

/** The same CRUD scenario for every Python web variant; `call(method, url, body)` answers (status, json). */
export function webTestBody(spec: GenerationSpec, call: string, base: string): string {
  const f = spec.field;
  return `    def test_create_read_update_delete(self) -> None:
        status, item = ${call}"POST", ${base}, {"${f}": "first"})
        self.assertEqual(status, 201)
        self.assertEqual(item["${f}"], "first")
        url = f"{${base}}/{item['id']}"
        self.assertEqual(${call}"GET", url), (200, item))
        status, updated = ${call}"PUT", url, {"${f}": "renamed"})
        self.assertEqual((status, updated["${f}"]), (200, "renamed"))
        self.assertEqual(len(${call}"GET", ${base})[1]), 1)
        self.assertEqual(${call}"DELETE", url)[0], 204)
        self.assertEqual(${call}"GET", url)[0], 404)

    def test_rejects_bad_input_and_unknown_ids(self) -> None:
        self.assertIn(${call}"POST", ${base}, {"${f}": ""})[0], (400, 422))
        self.assertEqual(${call}"GET", f"{${base}}/999")[0], 404)
        self.assertEqual(${call}"DELETE", f"{${base}}/999")[0], 404)


if __name__ == "__main__":
    unittest.main()
`;
}
