"""The dojo's shared state page: a recipe the user edits in the page and the agent edits too.

The page holds `recipe: {title, skill_level, cooking_time, special_preferences[],
ingredients[{icon, name, amount}], instructions[]}` as the agent's state and sends it with every
request. The agent's prompt carries the recipe as the page last sent it, so "give me all the
ingredients" is answered from what the user sees; `generate_recipe` replaces the recipe and
publishes it, and the page shows the change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from agui import RunContext
from agui.agents import ToolLoopAgent, tool
from agui.agents.models import Call, ChatMessage, ChatModel, Turn
from examples.dojo.models import answered, build_model, last_user_text, system_text

INSTRUCTIONS = (
    "You are a cooking assistant. The user and you share the recipe below. To change it, call "
    "generate_recipe with the whole new recipe; to answer a question, read it from the recipe."
)
_CURRENT = "The current recipe, as JSON:"


class Ingredient(BaseModel):
    """One ingredient, as the page lists it."""

    icon: str = "🍴"
    name: str
    amount: str = ""


class Recipe(BaseModel):
    """The recipe the page shows and edits."""

    title: str = "Make Your Recipe"
    skill_level: str = "Intermediate"
    cooking_time: str = "45 min"
    special_preferences: list[str] = Field(default_factory=list[str])
    ingredients: list[Ingredient] = Field(default_factory=list[Ingredient])
    instructions: list[str] = Field(default_factory=list[str])


class Kitchen(BaseModel):
    """The page's state."""

    recipe: Recipe = Field(default_factory=Recipe)


@tool
def generate_recipe(ctx: RunContext[Kitchen], recipe: Recipe) -> str:
    """Replace the shared recipe with a new version of it (give the whole recipe)."""
    ctx.state.recipe = recipe
    ctx.publish_state()
    return f"The recipe is now {recipe.title!r}, with {len(recipe.ingredients)} ingredients."


def instructions(ctx: RunContext[Kitchen]) -> str:
    """The system prompt: what the agent does, and the recipe as the page last sent it.

    Examples:
        >>> from agui import RunAgentInput
        >>> ctx, _ = RunContext.new(RunAgentInput(thread_id="t", run_id="r"), state=Kitchen)
        >>> instructions(ctx).splitlines()[-1]
        '{"title":"Make Your Recipe","skill_level":"Intermediate",...}'
    """
    return f"{INSTRUCTIONS}\n\n{_CURRENT}\n{ctx.state.recipe.model_dump_json()}"


def shared_state(model: ChatModel | None = None) -> ToolLoopAgent:
    """The shared state route's agent: its prompt holds the recipe of each request.

    Examples:
        >>> shared_state().toolbox.specs()[0].name
        'generate_recipe'
    """
    return ToolLoopAgent(
        model or build_model(recipe_turn), tools=[generate_recipe], instructions=instructions
    )


def recipe_turn(messages: Sequence[ChatMessage]) -> Turn:
    r"""The scripted cook: list the ingredients it is shown, or improve the recipe.

    Examples:
        >>> recipe = Recipe(ingredients=[Ingredient(name="Carrots", amount="3 large")])
        >>> prompt = ChatMessage.system(f"{_CURRENT}\n{recipe.model_dump_json()}")
        >>> recipe_turn([prompt, ChatMessage.user("Give me all the ingredients")]).content
        'The ingredients: Carrots (3 large).'
    """
    if answered(messages) is not None:
        return Turn.text("I updated the recipe: have a look.")
    recipe = _shown_recipe(messages)
    if "ingredient" in last_user_text(messages).lower():
        listed = ", ".join(
            f"{i.name} ({i.amount})" if i.amount else i.name for i in recipe.ingredients
        )
        return Turn.text(f"The ingredients: {listed or 'none yet'}.")
    better = recipe.model_copy(
        update={
            "ingredients": [
                *recipe.ingredients,
                Ingredient(icon="🌿", name="Fresh basil", amount="1 handful"),
            ],
            "instructions": [*recipe.instructions, "Garnish with fresh basil before serving"],
        }
    )
    return Turn.tool_calls(Call("generate_recipe", {"recipe": better.model_dump(mode="json")}))


def _shown_recipe(messages: Sequence[ChatMessage]) -> Recipe:
    """The recipe the prompt shows the model."""
    _, found, shown = system_text(messages).partition(_CURRENT)
    try:
        return Recipe.model_validate(json.loads(shown)) if found else Recipe()
    except (ValueError, ValidationError):
        return Recipe()
