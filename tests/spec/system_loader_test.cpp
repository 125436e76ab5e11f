// System descriptions (configs/systems): the shipped ones load with their documented shapes, and
// bad files get located errors.
#include "trn/spec/system_loader.h"

#include <gtest/gtest.h>

#include <string>

namespace trn::spec {
namespace {

std::string errorOf(const std::string& text) {
  const Result<SystemSpec> s = loadSystemFromString(text, "bad.yaml");
  EXPECT_FALSE(s.ok());
  return s.ok() ? std::string() : s.status().message();
}

const char* const kGood = R"(version: 1
name: pair
chip: {value: trn2, source: "test"}
links:
  - {name: neuronlink, bandwidth: 128GB/s, latency: 1.5us, message_overhead: 0us, source: "t"}
dimensions:
  - {name: x, size: 2, kind: ring, link: neuronlink, source: "t"}
)";

TEST(SystemFiles, TheShippedSystemsLoadWithTheirChipCounts) {
  const std::vector<std::string> systems = listSystems();
  EXPECT_EQ(systems, (std::vector<std::string>{"trn1.32xlarge", "trn2-cluster", "trn2-ultraserver",
                                               "trn2-ultraserver-cluster", "trn2.48xlarge"}));
  for (const auto& [name, chips] :
       {std::pair{"trn1.32xlarge", 16}, std::pair{"trn2.48xlarge", 16},
        std::pair{"trn2-ultraserver", 64}, std::pair{"trn2-cluster", 512},
        std::pair{"trn2-ultraserver-cluster", 4096}}) {
    const Result<SystemSpec> s = loadSystem(name);
    ASSERT_TRUE(s.ok()) << name << ": " << s.status().toString();
    EXPECT_EQ(s->chips(), chips) << name;
  }
  const Result<SystemSpec> trn2 = loadSystem("trn2.48xlarge");
  ASSERT_TRUE(trn2.ok());
  const LinkSpec* nl = trn2->link("neuronlink");
  ASSERT_NE(nl, nullptr);
  EXPECT_EQ(nl->bandwidth.count(), 128'000'000'000);
  EXPECT_EQ(nl->latency.count(), 1'500'000);
  EXPECT_NE(trn2->provenanceOf("links[0].bandwidth")->alternative.find("256 GB/s"),
            std::string::npos);
  EXPECT_EQ(trn2->dimensions[1].kind, DimensionKind::kRing);
}

TEST(SystemFiles, AGoodDescriptionFromTextLoads) {
  const Result<SystemSpec> s = loadSystemFromString(kGood, "pair.yaml");
  ASSERT_TRUE(s.ok()) << s.status().toString();
  EXPECT_EQ(s->chips(), 2);
  EXPECT_NE(formatSystem(*s).find("injection bandwidth per chip: 256GB/s"), std::string::npos)
      << formatSystem(*s);
}

TEST(SystemFiles, BadDescriptionsGetLocatedErrors) {
  auto replaced = [](std::string from, std::string to) {
    std::string text = kGood;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  EXPECT_NE(errorOf(replaced("link: neuronlink", "link: neuronlnk"))
                .find("bad.yaml:7:42: dimensions[0].link: no link named 'neuronlnk' in links (did "
                      "you mean 'neuronlink'?)"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("chip: {value: trn2, source: \"test\"}", "chip: trn2"))
                .find("bad.yaml:3:7: chip: missing source"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("version: 1", "version: 1\nrings: 3")).find("unknown key 'rings'"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("size: 2", "size: 0")).find("dimensions[0].size"), std::string::npos);
  EXPECT_NE(errorOf(replaced("kind: ring", "kind: mesh")).find("dimensions[0].kind"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("value: trn2", "value: trn9")).find("chip: chip 'trn9' not found"),
            std::string::npos);
  const std::string twice = std::string(kGood) +
                            "  - {name: y, size: 1024, kind: ring, link: neuronlink, source: t}\n"
                            "  - {name: z, size: 1024, kind: ring, link: neuronlink, source: t}\n";
  EXPECT_NE(errorOf(twice).find("more than 1048576 chips"), std::string::npos);
  const std::string sameLink =
      replaced("dimensions:",
               "  - {name: neuronlink, bandwidth: 1GB/s, latency: 1us, message_overhead: "
               "0us, source: t}\ndimensions:");
  EXPECT_NE(errorOf(sameLink).find("a second link named 'neuronlink'"), std::string::npos);
  EXPECT_NE(loadSystem("nosuchsystem").status().message().find("available systems: trn1.32xlarge"),
            std::string::npos);
}

}  // namespace
}  // namespace trn::spec
