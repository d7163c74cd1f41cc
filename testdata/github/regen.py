import json, os, sys, hashlib
root = sys.argv[1]
def user(login, id):
    return {"login": login, "id": id, "node_id": "MDQ6VXNlcj%d" % id, "avatar_url": "https://avatars.githubusercontent.com/u/%d?v=4" % id,
            "url": "https://api.github.com/users/" + login, "html_url": "https://github.com/" + login, "type": "User", "site_admin": False}
def repo(full, id, fork, owner):
    name = full.split("/")[1]
    return {"id": id, "node_id": "R_kgDO%08d" % id, "name": name, "full_name": full, "private": False, "owner": owner,
            "html_url": "https://github.com/" + full, "fork": fork, "url": "https://api.github.com/repos/" + full,
            "default_branch": "main", "visibility": "public"}
def label(name, id, color):
    return {"id": id, "node_id": "LA_kwDO%08d" % id, "url": "https://api.github.com/repos/radixark/miles/labels/" + name,
            "name": name, "color": color, "default": False, "description": None}
def pr(full, number, title, body, labels, head_full, head_ref, sha, state="open", merged=False, changed=1, base_owner=None, author=("octo-dev", 5101)):
    base_org = user(full.split("/")[0], 9001)
    au = user(*author)
    head_owner = au if head_full.split("/")[0] == author[0] else base_org
    d = {
        "url": "https://api.github.com/repos/%s/pulls/%d" % (full, number),
        "id": 2000000000 + number, "node_id": "PR_kwDOLq%06d" % number,
        "html_url": "https://github.com/%s/pull/%d" % (full, number),
        "diff_url": "https://github.com/%s/pull/%d.diff" % (full, number),
        "patch_url": "https://github.com/%s/pull/%d.patch" % (full, number),
        "number": number, "state": "closed" if merged else state, "locked": False, "title": title, "user": au,
        "body": body, "created_at": "2026-04-28T09:12:44Z", "updated_at": "2026-05-02T17:03:10Z",
        "closed_at": "2026-05-02T17:03:10Z" if merged else None,
        "merged_at": "2026-05-02T17:03:10Z" if merged else None,
        "merge_commit_sha": "9c1e5b7a3d2f4e6a8b0c1d3e5f7a9b2c4d6e8f01",
        "assignee": None, "assignees": [], "requested_reviewers": [], "labels": [label(*l) for l in labels],
        "draft": False,
        "head": {"label": "%s:%s" % (head_full.split("/")[0], head_ref), "ref": head_ref, "sha": sha, "user": head_owner,
                 "repo": repo(head_full, 700000001 if head_full != full else 700000000, head_full != full, head_owner)},
        "base": {"label": "%s:main" % full.split("/")[0], "ref": "main", "sha": "4b2d6f8a0c1e3a5c7e9b1d3f5a7c9e1b3d5f7a90", "user": base_org,
                 "repo": repo(full, 700000000, False, base_org)},
        "author_association": "CONTRIBUTOR", "auto_merge": None, "active_lock_reason": None,
        "merged": merged, "mergeable": True, "rebaseable": True, "mergeable_state": "clean", "merged_by": None,
        "comments": 3, "review_comments": 0, "maintainer_can_modify": True, "commits": 4,
        "additions": 120, "deletions": 31, "changed_files": changed,
    }
    return d
def f(status, path, prev=None, changes=3, patch=True):
    d = {"sha": hashlib.sha1(path.encode()).hexdigest(), "filename": path, "status": status,
         "additions": changes, "deletions": 0, "changes": changes,
         "blob_url": "https://github.com/radixark/miles/blob/5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d/" + path,
         "raw_url": "https://github.com/radixark/miles/raw/5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d/" + path,
         "contents_url": "https://api.github.com/repos/radixark/miles/contents/" + path + "?ref=5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d"}
    if changes and patch:
        d["patch"] = "@@ -1,3 +1,6 @@\n line\n+added line\n+added line\n+added line"
    if prev:
        d["previous_filename"] = prev
    return d
def write(path, obj):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as fh:
        json.dump(obj, fh, indent=2, ensure_ascii=False)
        fh.write("\n")

body2874 = """## Summary

Move the replay test and teach the PPO test the new loss scaling. CI needs the
SGLang weight-update PR:

```text
ci-sglang-pr: #1234
ci-megatron-pr: #82
```

## Test plan

Ran tests/e2e/megatron/test_qwen3_4b_ppo.py on 4xH200.
"""
files = [f("modified", "tests/e2e/megatron/test_qwen3_4b_ppo.py", changes=14),
         f("renamed", "tests/e2e/async/test_replay.py", "tests/e2e/async/test_replay_old.py", changes=0)]
for i in range(248):
    files.append(f("modified", "docs/en/examples/example_%03d.md" % i, changes=2, patch=False))
write("repos/radixark/miles/pulls/2874.json", pr("radixark/miles", 2874, "megatron: scale the PPO loss per token; move the replay test", body2874,
      [("run-ci-megatron", 6101, "0e8a16"), ("documentation", 6102, "0075ca")], "radixark/miles", "ppo-loss-scale",
      "5f1d0c7e2b9a4c3d8e6f7a1b2c3d4e5f6a7b8c9d", changed=len(files)))
write("repos/radixark/miles/pulls/2874/files.json", files)

write("repos/radixark/miles/pulls/2901.json", pr("radixark/miles", 2901, "docs: fix a typo in the quick start", None,
      [], "octo-dev/miles", "patch-1", "8e2c4a6f0b1d3e5a7c9f1b3d5e7a9c0b2d4f6a81", changed=2))
write("repos/radixark/miles/pulls/2901/files.json", [f("modified", "docs/en/get_started/quick_start.md", changes=2), f("modified", "README.md", changes=1)])

big = "## 概要\n\n" + ("重みの更新経路を整理し、検証用の説明を加えました。" * 1400) + "\n\nci-image-tag: dev-202605011200\n"
write("repos/radixark/miles/pulls/2950.json", pr("radixark/miles", 2950, "sglang: document the weight-update path", big,
      [("run-ci-sglang", 6103, "0e8a16")], "radixark/miles", "wu-docs", "3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a02", changed=1))
write("repos/radixark/miles/pulls/2950/files.json", [f("modified", "tests/e2e/sglang/test_sglang_weight_update.py", changes=40)])

write("repos/sgl-project/sglang/pulls/1234.json", pr("sgl-project/sglang", 1234, "[miles] expose the weight-update barrier", "Adds the barrier miles uses.",
      [], "sgl-project/sglang", "miles/weight-update-barrier", "c0ffee1234567890abcdef1234567890abcdef12", changed=3, author=("sglang-dev", 5301)))
write("repos/radixark/Megatron-LM/pulls/82.json", pr("radixark/Megatron-LM", 82, "Fix the dist-ckpt loader for Qwen3", "Fixes the loader.",
      [], "radixark/Megatron-LM", "fix-dist-ckpt", "badc0de4567890abcdef1234567890abcdef3456", merged=True, changed=2, author=("mlm-dev", 5401)))

ev = {"action": "labeled", "number": 2874,
      "label": label("run-ci-megatron", 6101, "0e8a16"),
      "pull_request": json.load(open(os.path.join(root, "repos/radixark/miles/pulls/2874.json"))),
      "repository": repo("radixark/miles", 700000000, False, user("radixark", 9001)),
      "organization": {"login": "radixark", "id": 9001},
      "sender": user("octo-dev", 5101)}
write("events/pull_request.json", ev)
fork = json.load(open(os.path.join(root, "repos/radixark/miles/pulls/2901.json")))
write("events/pull_request_fork.json", {"action": "opened", "number": 2901, "pull_request": fork,
      "repository": repo("radixark/miles", 700000000, False, user("radixark", 9001)), "sender": user("octo-dev", 5101)})
write("events/schedule.json", {"schedule": "0 15 * * 0-5", "repository": repo("radixark/miles", 700000000, False, user("radixark", 9001)),
      "organization": {"login": "radixark", "id": 9001}, "workflow": ".github/workflows/pr-test.yml"})
