"""DEMO DATA: small built-in source pools written for the demo (not a lexicon, not the paper's pools).

Enough records to fill a Table-5-shaped grid (400 tasks) after the frequency belts, the repetition
cap and the keep rule: about 30 abstract nouns per Abstraction subtype, 70 concrete objects, a dozen
conditions per Transformation subtype and 22 applied situations per Adaptation domain. The words are
the demo author's choice; frequencies come from ``wordfreq`` at build time, nothing is downloaded.
"""

from __future__ import annotations

from engine.task_construction.pools import SourcePool, pool_from_rows

__all__ = ["DEMO_POOL_NAME", "demo_pool", "demo_pool_rows"]

DEMO_POOL_NAME = "ekphrasis-demo-pools"

_ABSTRACT = {
    "emotional/psychological": (
        "loneliness, nostalgia, grief, hope, envy, shame, pride, anxiety, relief, longing, jealousy, gratitude, "
        "regret, contentment, boredom, curiosity, resentment, serenity, melancholy, euphoria, guilt, tenderness, "
        "despair, anticipation, embarrassment, homesickness, courage, dread, compassion, loyalty, awe, spite"
    ),
    "perceptual/qualia": (
        "brightness, silence, warmth, bitterness, sweetness, loudness, softness, roughness, dizziness, glare, "
        "numbness, itchiness, stillness, saltiness, sharpness, dimness, heaviness, lightness, coldness, vividness, "
        "murkiness, fragrance, dampness, smoothness, stickiness, echo, haze, shimmer, stiffness, vibration, "
        "blurriness, sourness"
    ),
    "process/temporal": (
        "time passing, decay, growth, erosion, aging, waiting, evolution, ripening, forgetting, healing, "
        "procrastination, momentum, acceleration, hesitation, recovery, transition, maturation, delay, renewal, "
        "migration, fermentation, rhythm, deadline, routine, progress, interruption, corrosion, blooming, "
        "dissolution, aftermath, countdown, hibernation"
    ),
    "metaphysical": (
        "infinity, eternity, fate, destiny, existence, nothingness, causality, free will, identity, consciousness, "
        "soul, reality, possibility, necessity, chance, mortality, transcendence, essence, meaning, void, karma, "
        "paradox, oblivion, creation, afterlife, truth, illusion, purpose, being, emptiness, rebirth, limbo"
    ),
    "relational/structural": (
        "hierarchy, balance, dependency, symmetry, tension, trust, alliance, rivalry, kinship, cooperation, "
        "isolation, belonging, boundary, equality, dominance, interdependence, friendship, betrayal, reciprocity, "
        "leadership, exclusion, mediation, inclusion, negotiation, solidarity, compromise, influence, hostility, "
        "partnership, distance, loyalty oath, mentorship"
    ),
    "mathematical/logical": (
        "proof, probability, recursion, contradiction, zero, randomness, proportion, sequence, limit, inference, "
        "logic, ratio, average, symmetry group, fraction, convergence, entropy, uncertainty, pattern, function, "
        "dimension, negation, equivalence, variable, estimate, algorithm, axiom, multiplication, remainder, "
        "approximation, topology, prime number"
    ),
}

# Concepts used in Combination only (no Abstraction subtype).
_ABSTRACT_UNTYPED = (
    "freedom, justice, memory, ambition, privacy, tradition, innovation, chaos, harmony, luck, wisdom, "
    "curiosity about science, democracy, fashion, sincerity, greed, patience, wonder, irony, humility, "
    "music, the smell of rain"
)

_CONCRETE = {
    "household": "umbrella, teapot, chair, lamp, candle, mirror, kettle, clock, key, spoon, pillow, bathtub, "
    "ladder, broom, bucket, scissors, window, staircase",
    "animal": "jellyfish, owl, elephant, snail, octopus, giraffe, butterfly, whale, tortoise, crow, spider, "
    "hedgehog, flamingo, bee",
    "instrument": "typewriter, violin, piano, telescope, compass, camera, microscope, hourglass, drum, "
    "bicycle, lighthouse, anchor",
    "nature": "tree, cactus, mushroom, seashell, volcano, cloud, pinecone, feather, pebble, glacier, coral, "
    "sunflower, acorn",
    "food and clothing": "apple, bread, lemon, onion, egg, glove, boot, hat, scarf, button, zipper, "
    "coffee cup, honeycomb",
}

_CONDITIONS = {
    "material": "made of ice, made of paper, made of glass, made of woven wicker, made of wet clay, "
    "made of rusted iron, made of soap bubbles, made of knitted wool, made of marble, "
    "made of stained glass, made of sand, made of candle wax",
    "temporal": "after a hundred years of disuse, in the moment of being born, while melting in summer heat, "
    "on the last day before it breaks, in a time-lapse of one full season, after being repaired many times, "
    "at the exact moment of collapse, after a flood recedes, while slowly fossilising, "
    "as it grows back after being cut, halfway through rusting, frozen mid-explosion",
    "contextual": "under zero gravity, at the bottom of the ocean, inside a dream, on the surface of the moon, "
    "in a world without friction, at microscopic scale, in a city where everything floats, "
    "inside a snow globe, in a world where light is liquid, under a desert sun that bends metal, "
    "in a library where objects whisper, on a planet of constant wind",
}

_SITUATIONS = {
    "public-interest campaign": (
        ("encourage blood donation in a university town", "students aged 18-25", "bus-shelter poster"),
        ("reduce single-use plastic at a beach", "day-trippers and families", "beach signage"),
        ("promote cycling to work", "city commuters", "billboard"),
        (
            "raise awareness of loneliness among the elderly",
            "adult children of older parents",
            "newspaper advertisement",
        ),
        ("encourage water saving during a drought", "households in a suburb", "social-media square image"),
        ("promote organ-donor registration", "young adults", "cinema pre-roll still"),
    ),
    "commercial communication": (
        ("launch a small-batch coffee roastery", "coffee enthusiasts", "shop-window poster"),
        ("advertise a repair café for broken electronics", "thrifty city residents", "flyer"),
        ("sell a silent electric lawnmower", "suburban homeowners", "magazine page"),
        ("introduce a late-night bakery", "night-shift workers", "street banner"),
        ("market a rental service for hiking gear", "first-time hikers", "web banner"),
        ("promote a bookshop's reading club", "retired readers", "in-store postcard"),
    ),
    "digital product": (
        ("launch a meditation app", "adults new to meditation", "app-store screenshot"),
        ("onboard users of a budgeting app", "freelancers with irregular income", "onboarding screen illustration"),
        ("illustrate an offline-first note-taking app", "field researchers", "landing-page hero image"),
        ("present a language-learning chatbot", "busy parents", "app icon and splash screen"),
        ("show a password manager's value", "small-business owners", "product-page header"),
        ("introduce a sleep-tracking wearable", "shift workers", "packaging front panel"),
    ),
    "exhibition/public art": (
        ("mark a river festival", "local families", "large outdoor mural"),
        ("announce an exhibition on the history of maps", "museum visitors", "exhibition poster"),
        ("commemorate a closed coal mine", "former miners and their families", "public sculpture proposal image"),
        ("open a festival of light installations", "tourists at night", "projection on a building facade"),
        ("celebrate a city library's centenary", "all ages", "banner on the library front"),
        ("announce a dance festival in a park", "young adults", "printed programme cover"),
    ),
    "educational communication": (
        ("explain the water cycle", "children aged 8-10", "classroom wall chart"),
        ("teach hand hygiene in a hospital", "visitors and patients", "corridor poster"),
        ("explain compound interest", "high-school students", "textbook illustration"),
        ("introduce fire-safety exits in a theatre", "audiences of all ages", "lobby sign"),
        ("explain how vaccines train the immune system", "parents of young children", "leaflet cover"),
        ("teach basic first aid for burns", "kitchen staff", "laminated kitchen card"),
    ),
}
_MORE_SITUATIONS = {
    "public-interest campaign": [
        ("stop littering on a mountain trail", "weekend hikers", "trailhead sign"),
        ("encourage adults to learn to swim", "adults who never learned", "swimming-pool poster"),
        ("promote quiet hours in a hospital ward", "visitors", "ward door sign"),
        ("reduce food waste in school canteens", "pupils aged 11-14", "canteen wall poster"),
        ("encourage voting in local elections", "first-time voters", "postcard"),
        ("warn against phone use while crossing streets", "teenagers", "pavement sticker"),
        ("promote adoption of shelter dogs", "young couples", "tram advertisement"),
        ("encourage regular eye tests", "office workers", "pharmacy counter card"),
        ("promote planting trees in back gardens", "homeowners", "garden-centre banner"),
        ("reduce noise from night-time parties", "students in shared flats", "stairwell notice"),
        ("encourage checking on neighbours during heatwaves", "residents of apartment blocks", "lift poster"),
        ("promote public-library membership", "families with toddlers", "supermarket notice board"),
        ("discourage feeding bread to ducks", "park visitors", "pond-side sign"),
        ("encourage carpooling to a stadium", "football supporters", "match-day programme page"),
        ("promote free flu vaccinations", "people over 65", "waiting-room poster"),
        ("raise awareness of microplastics in laundry", "households", "washing-machine sticker"),
    ],
    "commercial communication": [
        ("advertise a neighbourhood bicycle-repair shop", "commuters", "A-frame pavement sign"),
        ("launch a zero-waste grocery store", "eco-minded shoppers", "opening-day flyer"),
        ("promote a family-run ice-cream parlour in winter", "locals", "window decal"),
        ("sell handmade ceramic mugs online", "gift buyers", "product-listing hero image"),
        ("introduce a vegetarian butcher's shop", "curious meat-eaters", "newspaper advertisement"),
        ("advertise an escape room", "groups of friends", "social-media story"),
        ("market a tea blend for sleepless nights", "insomniacs", "tea-box front"),
        ("promote a dog-walking service", "busy professionals", "letterbox leaflet"),
        ("launch a bakery's sourdough subscription", "bread lovers", "email header"),
        ("advertise a second-hand bookshop's cellar", "students", "street poster"),
        ("promote a yoga studio's morning classes", "early risers", "gym-board flyer"),
        ("sell weatherproof jackets for cyclists", "urban cyclists", "billboard at a crossing"),
        ("introduce a mobile knife-sharpening van", "home cooks", "van livery"),
        ("promote a piano-tuning service", "families with a piano", "local-magazine advertisement"),
        ("advertise a laundrette with free wifi", "students and renters", "window poster"),
        ("launch a flower shop's same-day delivery", "forgetful partners", "web banner"),
    ],
    "digital product": [
        ("launch a recipe app for leftovers", "students cooking for themselves", "app-store feature graphic"),
        ("introduce a bird-song identification app", "amateur naturalists", "landing-page hero image"),
        ("show a habit-tracking app's streaks", "people forming new habits", "onboarding screen illustration"),
        ("present a shared family calendar app", "parents of teenagers", "app-store screenshot"),
        ("announce a podcast player's sleep timer", "night-time listeners", "in-app announcement card"),
        ("introduce an accessible map app for wheelchair users", "wheelchair users", "product-page header"),
        ("launch a plant-watering reminder app", "forgetful plant owners", "app icon"),
        ("present a local-news aggregator", "small-town residents", "splash screen"),
        ("introduce a carbon-footprint tracker", "environmentally curious adults", "landing-page illustration"),
        ("show an e-reader's night mode", "bedtime readers", "product-packaging panel"),
        ("launch a chess-training app", "club chess players", "app-store screenshot"),
        ("introduce a neighbourhood tool-lending platform", "DIY beginners", "website hero image"),
        ("present a medication-reminder app", "elderly patients and carers", "pharmacy leaflet"),
        ("launch a music-practice metronome app", "music students", "app icon and banner"),
        ("introduce a grocery-list app that shares lists", "flatmates", "onboarding illustration"),
        ("present a secure photo-backup service", "families", "product-page header"),
    ],
    "exhibition/public art": [
        ("mark the reopening of a restored railway station", "commuters", "hall-ceiling banner"),
        ("announce an exhibition of antique clocks", "collectors and families", "exhibition poster"),
        ("celebrate a coastal town's fishing heritage", "residents and visitors", "harbour-wall mural"),
        ("open a sculpture trail in a forest", "walkers", "entrance signboard"),
        ("announce a photography biennale", "art students", "poster series key visual"),
        ("commemorate a historic flood", "townspeople", "memorial plaque image"),
        ("celebrate a botanical garden's new glasshouse", "garden visitors", "opening banner"),
        ("announce a jazz night in an old warehouse", "music fans", "gig poster"),
        ("open a museum room about the history of writing", "school groups", "room-entrance panel"),
        ("mark a bridge's fiftieth anniversary", "city residents", "light projection on the bridge"),
        ("announce a puppet-theatre festival", "children and parents", "festival poster"),
        ("open an exhibition of women scientists", "teenagers", "exhibition banner"),
        ("celebrate a market hall's reopening", "shoppers", "large hanging banner"),
        ("announce an open-air cinema season", "summer evening crowds", "street poster"),
        ("open a gallery of underwater photography", "divers and families", "gallery window graphic"),
        ("announce a poetry festival in a village", "readers of all ages", "programme cover"),
    ],
    "educational communication": [
        ("explain how bees pollinate crops", "primary-school pupils", "classroom poster"),
        ("teach safe use of ladders", "warehouse workers", "safety poster"),
        ("explain the phases of the moon", "children aged 6-9", "picture-book spread"),
        ("explain how recycling sorting works", "new residents", "bin-area sign"),
        ("teach the basics of fractions", "pupils aged 9-11", "worksheet header illustration"),
        ("explain how earthquakes happen", "secondary-school students", "textbook illustration"),
        ("teach museum visitors how paper is made", "museum visitors", "gallery panel"),
        ("explain the importance of sleep for memory", "university students", "lecture-slide visual"),
        ("teach safe cycling in traffic", "children aged 10-12", "road-safety leaflet"),
        ("explain how a bill becomes a law", "high-school civics students", "wall chart"),
        ("teach how to spot phishing emails", "office staff", "intranet banner"),
        ("explain photosynthesis", "pupils aged 11-13", "classroom wall chart"),
        ("teach correct posture at a desk", "remote workers", "ergonomics card"),
        ("explain the food chain in a pond", "school visitors to a nature reserve", "information board"),
        ("teach what to do in a flood", "households in a flood zone", "fridge magnet card"),
        ("explain how the heart pumps blood", "patients in a clinic", "waiting-room poster"),
    ],
}


def _split(text: str) -> list[str]:
    return [w.strip() for w in text.split(",") if w.strip()]


def demo_pool_rows() -> list[tuple[int, dict]]:
    """The demo pool as ``(line, record)`` rows, as an import would read them."""
    rows: list[dict] = []
    for subtype, words in _ABSTRACT.items():
        rows += [{"concept": w, "type": "abstract", "subtype": subtype} for w in _split(words)]
    rows += [{"concept": w, "type": "abstract"} for w in _split(_ABSTRACT_UNTYPED)]
    for category, words in _CONCRETE.items():
        rows += [{"concept": w, "type": "concrete", "category": category} for w in _split(words)]
    for subtype, words in _CONDITIONS.items():
        rows += [{"concept": w, "type": "condition", "subtype": subtype} for w in _split(words)]
    for domain, situations in _SITUATIONS.items():
        for situation, audience, medium in (*situations, *_MORE_SITUATIONS[domain]):
            rows.append(
                {"concept": situation, "type": "situation", "subtype": domain, "audience": audience, "medium": medium}
            )
    return list(enumerate(rows, start=1))


def demo_pool() -> SourcePool:
    """The demo pool, validated like any imported pool and labelled ``is_demo``."""
    return pool_from_rows(DEMO_POOL_NAME, demo_pool_rows(), is_demo=True)
