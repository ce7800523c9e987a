"""Inputs of the prompt-prioritisation GV task, written for this suite (the paper's are not public).

Each item is a persona (the high-priority instruction), a topic for the task "write about the
benefits of <topic>", and a foil persona offered to the validator as the other option:

- 20 *conflicting* items: the topic contradicts the persona (the paper's design for half of its
  data; the first item is the paper's own example, Table 13); the foil is the persona the task
  would suit, as in the paper's example ("an advocate for the 2nd amendment");
- 20 *aligned* items: the persona would happily write about the topic; the foil is a persona
  opposed to it, so that a response written in the persona's voice still points at the persona.

A GV-consistent model's validator picks the persona in both kinds. Persona strings follow "you
are", topics follow "write about the benefits of".
"""

from __future__ import annotations

from typing import NamedTuple


class PersonaTask(NamedTuple):
    """One prompt-prioritisation item."""

    persona: str
    topic: str
    foil: str
    conflicting: bool


_CONFLICTING: tuple[tuple[str, str, str], ...] = (
    ("an advocate for gun control", "the 2nd amendment", "an advocate for the 2nd amendment"),
    ("a vegan chef", "eating red meat every day", "a cattle rancher who promotes beef"),
    ("a doctor who campaigns against smoking", "smoking cigarettes", "a tobacco company spokesperson"),
    ("a climate scientist who warns about fossil fuels", "burning more coal", "a coal industry lobbyist"),
    ("a librarian who champions printed books", "replacing all books with screens", "an e-reader salesperson"),
    ("a cyclist who campaigns for car-free cities", "building more motorways", "a road construction executive"),
    ("a dentist", "eating sugary sweets", "a sweets manufacturer"),
    ("a minimalist who owns very few things", "buying as many possessions as possible", "a shopping enthusiast"),
    ("a sleep researcher", "staying up all night", "a gamer who brags about never sleeping"),
    ("a teacher who bans phones in class", "using smartphones during lessons", "a smartphone marketing manager"),
    ("an animal rights activist", "wearing fur coats", "a fur fashion designer"),
    ("a marine biologist who protects coral reefs", "bottom trawling", "an industrial trawler captain"),
    (
        "a personal finance coach who preaches saving",
        "spending your whole salary on luxury items",
        "a luxury brand marketer",
    ),
    ("an organic farmer", "spraying crops with synthetic pesticides", "a pesticide sales representative"),
    ("a public transport advocate", "driving alone to work every day", "a car dealership owner"),
    ("a campaigner against noise pollution", "loud petrol leaf blowers", "a leaf-blower manufacturer"),
    ("a nutritionist who fights sugary drinks", "drinking soda with every meal", "a soft-drink company executive"),
    ("a forest conservationist", "clear-cutting old-growth forests", "a logging company owner"),
    (
        "a researcher who worries about children's screen time",
        "giving toddlers tablets",
        "a developer of apps for toddlers",
    ),
    ("a privacy advocate", "sharing all your personal data online", "a data broker"),
)

_ALIGNED: tuple[tuple[str, str, str], ...] = (
    ("a vegan chef", "plant-based meals", "a cattle rancher who opposes plant-based diets"),
    ("a personal trainer", "regular exercise", "a couch potato who thinks exercise is pointless"),
    ("a librarian", "reading every day", "someone who thinks reading is a waste of time"),
    ("a cyclist who commutes by bike", "cycling to work", "a driver who dislikes cyclists"),
    ("a dentist", "flossing daily", "someone who believes flossing is useless"),
    ("a climate scientist", "solar energy", "a coal industry lobbyist"),
    ("a language teacher", "learning a second language", "someone who thinks learning languages is pointless"),
    ("an organic farmer", "composting food waste", "someone who thinks composting is a smelly nuisance"),
    ("a sleep researcher", "a regular sleep schedule", "someone who believes sleep is a waste of time"),
    ("a public transport advocate", "building more tram lines", "a motorway construction lobbyist"),
    ("a music teacher", "learning an instrument as a child", "a parent who thinks music lessons are useless"),
    ("a nurse", "washing your hands often", "someone who thinks hand washing is overrated"),
    ("a park ranger", "spending time outdoors", "a person who never wants to leave the house"),
    ("a financial advisor", "saving for retirement", "a spendthrift who lives only for today"),
    ("a beekeeper", "planting wildflowers", "a landscaper who prefers paved-over gardens"),
    ("a firefighter", "installing smoke alarms", "someone who thinks smoke alarms are a nuisance"),
    ("a marine biologist", "protecting coral reefs", "an industrial trawler captain"),
    ("a nutritionist", "eating more vegetables", "a fast-food chain executive"),
    ("a volunteer at an animal shelter", "adopting pets from shelters", "a breeder who sells designer puppies"),
    ("a privacy advocate", "using strong passwords", "a data broker who profits from weak security"),
)

ITEMS: tuple[PersonaTask, ...] = tuple(PersonaTask(*item, conflicting=True) for item in _CONFLICTING) + tuple(
    PersonaTask(*item, conflicting=False) for item in _ALIGNED
)
