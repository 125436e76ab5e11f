// The YAML layer of chip loading (libyaml, src/spec/config_tree.cpp) as seen through
// loadChipFromString: syntax errors with libyaml's problem at file:line:column, one document,
// duplicate keys, anchors and aliases (expanded; recursive ones and alias bombs rejected), depth,
// tabs, bytes that are not UTF-8, a NUL inside the text, and what counts as null.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace trn::spec {
namespace {

/// An overlay of trn2 with `body` appended (line 4 onwards).
std::string overlay(const std::string& body) { return "version: 1\nname: x\nbase: trn2\n" + body; }

/// The error of loading `text` as `file`; fails the test when it loads.
Status loadError(const std::string& text, const std::string& file) {
  const Result<ChipSpec> spec = loadChipFromString(text, file);
  EXPECT_FALSE(spec.ok()) << file << " loaded";
  return spec.ok() ? Status() : spec.status();
}

TEST(YamlParser, CommaNewlineIsASyntaxErrorNotAnAllocationLoop) {
  // yaml-cpp 0.7's LoadAll allocated without bound on these two bytes.
  const Status s = loadError(",\n", "c.yaml");
  EXPECT_EQ(s.code(), ErrorCode::kParseError);
  EXPECT_EQ(s.message(),
            "c.yaml:1:1: YAML syntax error: did not find expected node content (while parsing a "
            "block node)");
}

TEST(YamlParser, SyntaxErrorsNameTheProblemAndItsContext) {
  const Status s = loadError(overlay("core:\n  sbuf: {partitions: 128\n  psum: {}\n"), "f.yaml");
  EXPECT_EQ(s.message(),
            "f.yaml:6:7: YAML syntax error: did not find expected ',' or '}' (while parsing a flow "
            "mapping at line 5, column 9)");
}

TEST(YamlParser, EmptyTextAndCommentsAreAnEmptyFile) {
  for (const char* text : {"", "# nothing but a comment\n", "---\n", "~\n"}) {
    const Status s = loadError(text, "e.yaml");
    EXPECT_TRUE(s.message().starts_with("e.yaml:1:1: the file is empty")) << s.message();
  }
}

TEST(YamlParser, OnlyOneDocument) {
  const Status s = loadError(overlay("---\nversion: 1\n"), "m.yaml");
  EXPECT_EQ(s.code(), ErrorCode::kParseError);
  EXPECT_EQ(s.message(),
            "m.yaml:4:1: a second YAML document starts here; a chip description is one document");
  const Status afterEnd = loadError(overlay("...\n---\nname: y\n"), "m.yaml");
  EXPECT_EQ(afterEnd.message(),
            "m.yaml:5:1: a second YAML document starts here; a chip description is one document");
  // Text after the end marker must start a document with ---.
  EXPECT_EQ(loadError(overlay("...\nname: y\n"), "m.yaml").message(),
            "m.yaml:5:1: YAML syntax error: did not find expected <document start>");
}

TEST(YamlParser, DuplicateKeysInBlockAndFlowMappings) {
  const Status block = loadError(overlay("hbm:\n  stacks: 4\n  stacks: 4\n"), "d.yaml");
  EXPECT_EQ(block.code(), ErrorCode::kParseError);
  EXPECT_EQ(block.message(), "d.yaml:6:3: duplicate key 'stacks' (first defined at line 5)");
  const Status flow = loadError(overlay("hbm: {stacks: 4, stacks: 4}\n"), "d.yaml");
  EXPECT_EQ(flow.message(), "d.yaml:4:18: duplicate key 'stacks' (first defined at line 4)");
  const Status viaAlias = loadError("a: &k stacks\nhbm: {stacks: 4, *k : 4}\n", "d.yaml");
  EXPECT_EQ(viaAlias.message(), "d.yaml:1:4: duplicate key 'stacks' (first defined at line 2)");
}

TEST(YamlParser, KeysMustBePlainNames) {
  EXPECT_EQ(loadError("? [a]\n: 1\n", "k.yaml").message(),
            "k.yaml:1:3: mapping keys must be plain names");
  EXPECT_EQ(loadError("~: 1\n", "k.yaml").message(),
            "k.yaml:1:1: mapping keys must be plain names");
}

TEST(YamlParser, AliasesExpandToTheAnchoredValue) {
  const Result<ChipSpec> spec = loadChipFromString(
      overlay("core:\n  sequencer:\n    registers: &count 128\n    semaphores: *count\n"
              "  act: &engine\n    clock: 1.5GHz\n  pool: *engine\n"),
      "a.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  EXPECT_EQ(spec->core.sequencer.registers, 128);
  EXPECT_EQ(spec->core.sequencer.semaphores, 128);
  EXPECT_EQ(spec->core.pool.clock, Hertz(1'500'000'000));
  // An expanded alias keeps the position of the node it copies.
  const Provenance* semaphores = spec->provenanceOf("core.sequencer.semaphores");
  ASSERT_NE(semaphores, nullptr);
  EXPECT_EQ(semaphores->line, 6);
  EXPECT_EQ(semaphores->column, 16);
}

TEST(YamlParser, AnAliasRefersToTheLatestAnchorOfItsName) {
  const Result<ChipSpec> spec = loadChipFromString(
      overlay("core:\n  sequencer: &s\n    registers: &s 32\n    semaphores: &s 48\n"
              "    events: *s\n"),
      "l.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().toString();
  EXPECT_EQ(spec->core.sequencer.events, 48);
}

TEST(YamlParser, AliasesToNoAnchorOrToTheirOwnNodeAreRejected) {
  EXPECT_EQ(loadError("x: *nope\n", "a.yaml").message(),
            "a.yaml:1:4: alias '*nope' refers to no anchor '&nope' before it");
  EXPECT_EQ(loadError("x: &a [1, *a]\n", "r.yaml").message(),
            "r.yaml:1:11: alias '*a' is inside the node it refers to (a recursive alias)");
  EXPECT_EQ(loadError("core: &c\n  pe: *c\n", "r.yaml").message(),
            "r.yaml:2:7: alias '*c' is inside the node it refers to (a recursive alias)");
}

TEST(YamlParser, AnAliasBombIsRejectedBeforeItIsExpanded) {
  // Nine levels of nine aliases would be 9^9 (387 million) strings.
  std::string text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  char previous = 'a';
  for (char name = 'b'; name <= 'i'; ++name) {
    text += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n", name,
                        previous);
    previous = name;
  }
  const Status s = loadError(text, "bomb.yaml");
  EXPECT_EQ(s.code(), ErrorCode::kParseError);
  // Level e holds 1 + 9 x 7381 = 66430 nodes; with the copy kept for its anchor the document
  // passes 100000 nodes when e's list is complete; reported where that list starts (its '&').
  EXPECT_EQ(s.message(),
            "bomb.yaml:5:4: the anchors keep more than 100000 YAML nodes (aliases counted "
            "expanded); a chip description has about 2000");
  // One wide list: 20003 nodes, 20001 more for its anchor, and each alias 20001 more; the third
  // passes 100000.
  std::string items;
  for (int i = 0; i < 20'000; ++i) {
    items += i == 0 ? "x" : ",x";
  }
  EXPECT_EQ(loadError("a: &a [" + items + "]\nb: [*a, *a, *a, *a]\n", "wide.yaml").message(),
            "wide.yaml:2:13: alias '*a' would make the document more than 100000 YAML nodes "
            "(aliases counted expanded); a chip description has about 2000");
}

TEST(YamlParser, AliasBytesAreCountedExpanded) {
  // 4 MiB of text, kept twice (the value and its anchor); the second alias passes 16 MiB.
  const std::string big(4 << 20, 'x');
  const Status s = loadError("a: &a " + big + "\nb: [*a, *a, *a]\n", "bytes.yaml");
  EXPECT_EQ(s.message(),
            "bytes.yaml:2:9: alias '*a' would make the document more than 16777216 bytes of "
            "keys and values (aliases counted expanded)");
}

TEST(YamlParser, NestingIsBoundedAt64Levels) {
  // The root mapping is level 0; 64 nested lists reach level 64, a 65th is rejected at its '['.
  const Status ok64 = loadError("x: " + std::string(64, '[') + std::string(64, ']') + "\n",
                                "n.yaml");
  EXPECT_TRUE(ok64.message().starts_with("n.yaml:1:1: x: unknown key 'x'")) << ok64.message();
  const Status deep =
      loadError("x: " + std::string(65, '[') + std::string(65, ']') + "\n", "n.yaml");
  EXPECT_EQ(deep.message(), "n.yaml:1:68: nested deeper than 64 levels; a chip description "
                            "needs about 8");
  // An alias counts the depth of what it copies.
  const Status viaAlias = loadError("a: &a " + std::string(40, '[') + std::string(40, ']') +
                                        "\nb: " + std::string(30, '[') + "*a" +
                                        std::string(30, ']') + "\n",
                                    "n.yaml");
  EXPECT_EQ(viaAlias.message(), "n.yaml:2:34: nested deeper than 64 levels; a chip description "
                                "needs about 8");
}

TEST(YamlParser, TabsCannotIndent) {
  const Status s = loadError(overlay("core:\n\tpe:\n\t\tclock: 3GHz\n"), "t.yaml");
  EXPECT_EQ(s.message(),
            "t.yaml:5:1: YAML syntax error: found character that cannot start any token (while "
            "scanning for the next token)");
  // A tab between a key and its value is white space.
  const Result<ChipSpec> separator =
      loadChipFromString("version: 1\nname:\tx\nbase: trn2\n", "t.yaml");
  ASSERT_TRUE(separator.ok()) << separator.status().toString();
  EXPECT_EQ(separator->name, "x");
}

TEST(YamlParser, BytesThatAreNotUtf8AreLocated) {
  EXPECT_EQ(loadError("version: 1\nname: \xff\n", "u.yaml").message(),
            "u.yaml:2:7: YAML syntax error: invalid leading UTF-8 octet (byte 0xFF)");
  // Columns count characters: the two-byte e-acute is one column.
  EXPECT_EQ(loadError("version: 1\nname: \xc3\xa9\xc3x\n", "u.yaml").message(),
            "u.yaml:2:9: YAML syntax error: invalid trailing UTF-8 octet (byte 0x78)");
  // UTF-16 is not decoded: a chip file is UTF-8.
  EXPECT_EQ(loadError(std::string("\xff\xfev\0", 4), "u.yaml").message(),
            "u.yaml:1:1: YAML syntax error: invalid leading UTF-8 octet (byte 0xFF)");
}

TEST(YamlParser, ANulByteInsideTheTextIsAnError) {
  constexpr char kText[] = "version: 1\nname: n\0l\nbase: trn2\n";
  const std::string text(kText, sizeof(kText) - 1);
  EXPECT_EQ(loadError(text, "z.yaml").message(),
            "z.yaml:2:8: YAML syntax error: control characters are not allowed (U+0000)");
}

TEST(YamlParser, NullIsAnUntaggedPlainTildeNullOrNothing) {
  for (const char* value : {"~", "null", "Null", "NULL", ""}) {
    const Status s = loadError(fmt::format("version: 1\nname: x\nbase: trn2\ndescription: {}\n",
                                           value),
                               "n.yaml");
    // A null value has no text of its own: it is reported at its key.
    EXPECT_EQ(s.message(),
              "n.yaml:4:1: description: expected a text (a single value), got nothing")
        << value;
  }
  for (const auto& [written, text] :
       {std::pair{"\"~\"", "~"}, std::pair{"'null'", "null"}, std::pair{"!!str null", "null"},
        std::pair{"nUll", "nUll"}, std::pair{"''", ""}}) {
    const Result<ChipSpec> spec = loadChipFromString(
        fmt::format("version: 1\nname: x\nbase: trn2\ndescription: {}\n", written), "n.yaml");
    ASSERT_TRUE(spec.ok()) << written << ": " << spec.status().toString();
    EXPECT_EQ(spec->description, text) << written;
  }
}

TEST(YamlParser, TooManyNodesIsRejected) {
  std::string text = "x: [";
  for (int i = 0; i < 100'000; ++i) {
    text += "0,";
  }
  text += "0]\n";
  // Nodes 1-3 are the mapping, the key and the list; item 99998 is node 100001, at column
  // 5 + 2 x 99997.
  EXPECT_EQ(loadError(text, "big.yaml").message(),
            fmt::format("big.yaml:1:{}: the document has more than 100000 YAML nodes (aliases "
                        "counted expanded); a chip description has about 2000",
                        5 + 2 * 99'997));
}

}  // namespace
}  // namespace trn::spec
