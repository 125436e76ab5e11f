// A compile-time list of types, used to gather the instruction types that each engine-family
// header declares into the single InstructionBody variant.
#pragma once

#include <variant>

namespace trn::isa {

template <typename... Ts>
struct TypeList {};

template <typename... Lists>
struct ConcatLists;

template <>
struct ConcatLists<> {
  using type = TypeList<>;
};

template <typename... As>
struct ConcatLists<TypeList<As...>> {
  using type = TypeList<As...>;
};

template <typename... As, typename... Bs, typename... Rest>
struct ConcatLists<TypeList<As...>, TypeList<Bs...>, Rest...> {
  using type = typename ConcatLists<TypeList<As..., Bs...>, Rest...>::type;
};

template <typename List>
struct VariantOf;

template <typename... Ts>
struct VariantOf<TypeList<Ts...>> {
  using type = std::variant<Ts...>;
};

}  // namespace trn::isa
